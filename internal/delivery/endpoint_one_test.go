package delivery_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/postings"
)

// TestEndpointOneLikeAnyEndpoint: endpoint one (the merchant's default URL)
// is disabled, enabled and given a selection of types through the
// endpoints' store like any endpoint. Disabled, the default URL receives
// nothing new and a replay does not send there; selecting card.unfrozen,
// it receives that type alone; an event's own callback_url (the spec's
// per-object URL) is sent whatever endpoint one's settings; it is still
// never deleted.
func TestEndpointOneLikeAnyEndpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	rc, m, _, c := newCapturedShop(t, f, "Endpoint one")
	list, err := f.store.Endpoints(ctx, m.ID)
	if err != nil || len(list) != 1 {
		t.Fatal(list, err)
	}
	one := list[0].ID
	d := f.dispatcher(nil)
	drain := func() {
		for round(t, d) > 0 {
		}
	}
	drain() // card.created: sent nowhere (no URL of its own)
	types := func() []string {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		var out []string
		for _, g := range rc.got {
			var b struct {
				EventType string `json:"event_type"`
			}
			_ = json.Unmarshal(g.body, &b)
			out = append(out, b.EventType)
		}
		return out
	}

	e, err := f.store.UpdateEndpoint(ctx, m.ID, one, delivery.EndpointSpec{Enabled: ptr(false)})
	if err != nil || e.Enabled || e.URL != rc.srv.URL+"/hooks" {
		t.Fatalf("disable endpoint one: %+v, %v", e, err)
	}
	if _, err := f.l.Cards.FreezeCard(ctx, m.ID, c.CardNo, "", nil); err != nil {
		t.Fatal(err)
	}
	// A card with its own URL: the request asked for it, so it is sent.
	own := newCapturer(t)
	if _, err := f.l.Cards.CreateCard(ctx, m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 1_00,
		CallbackURL: own.srv.URL + "/own"}, nil); err != nil {
		t.Fatal(err)
	}
	drain()
	if got := types(); len(got) != 0 {
		t.Fatalf("disabled endpoint one received %v", got)
	}
	if own.last(t).body == nil {
		t.Fatal("the card's own callback_url received nothing")
	}
	frozen, err := f.store.Deliveries(ctx, m.ID, "", 2)
	if err != nil || len(frozen) != 2 || frozen[1].EventType != cards.EventCardFrozen || frozen[1].Status != delivery.DeliveryNotSent {
		t.Fatalf("the events while endpoint one was disabled: %+v, %v", frozen, err)
	}
	if _, err := f.store.ReplayEvent(ctx, m.ID, frozen[1].EventID); reason(err) != postings.ReasonNoCallbackURL {
		t.Errorf("a replay while endpoint one is disabled: %v, want no_callback_url", err)
	}

	// Enabled again, for card.unfrozen alone.
	e, err = f.store.UpdateEndpoint(ctx, m.ID, one, delivery.EndpointSpec{Enabled: ptr(true), EventTypes: &[]string{"card.unfrozen"}})
	if err != nil || !e.Enabled || len(e.EventTypes) != 1 {
		t.Fatalf("endpoint one for card.unfrozen: %+v, %v", e, err)
	}
	if _, err := f.l.Cards.UnfreezeCard(ctx, m.ID, c.CardNo, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.l.Cards.FreezeCard(ctx, m.ID, c.CardNo, "", nil); err != nil {
		t.Fatal(err)
	}
	drain()
	if got := types(); len(got) != 1 || got[0] != cards.EventCardUnfrozen {
		t.Fatalf("endpoint one selecting card.unfrozen received %v", got)
	}
	if _, err := f.store.ReplayEvent(ctx, m.ID, frozen[1].EventID); reason(err) != postings.ReasonNoCallbackURL {
		t.Errorf("a replay of a type endpoint one does not take: %v, want no_callback_url", err)
	}

	// Every type again: what the spec's callbacks always did.
	if _, err := f.store.UpdateEndpoint(ctx, m.ID, one, delivery.EndpointSpec{EventTypes: &[]string{}}); err != nil {
		t.Fatal(err)
	}
	if info, err := f.store.ReplayEvent(ctx, m.ID, frozen[1].EventID); err != nil || info.Status != delivery.DeliveryPending {
		t.Fatalf("a replay once endpoint one takes every type: %+v, %v", info, err)
	}
	drain()
	if got := types(); len(got) != 2 || got[1] != cards.EventCardFrozen {
		t.Errorf("endpoint one taking every type received %v", got)
	}
	if err := f.store.DeleteEndpoint(ctx, m.ID, one); err == nil {
		t.Error("endpoint one was deleted")
	}
}

// TestReplayFailedSkipsDisabledEndpointOne: a failed delivery to the
// default URL is not replayed while endpoint one is disabled (a disabled
// endpoint receives nothing, replays included), and is once it is enabled.
func TestReplayFailedSkipsDisabledEndpointOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	f.recv.down.Store(true)
	c := f.card(t, "")
	if _, err := f.l.Cards.FreezeCard(ctx, f.m.ID, c.CardNo, "", nil); err != nil {
		t.Fatal(err)
	}
	d := f.dispatcher(nil)
	for range 40 {
		round(t, d)
		info := f.deliveries(t)[cards.EventCardFrozen]
		if info.Status == delivery.DeliveryFailed {
			break
		}
		f.clock.Add(info.NextAttemptAt.Sub(f.clock.Now()))
	}
	if info := f.deliveries(t)[cards.EventCardFrozen]; info.Status != delivery.DeliveryFailed {
		t.Fatalf("after 24 hours: %+v", info)
	}
	list, err := f.store.Endpoints(ctx, f.m.ID)
	if err != nil {
		t.Fatal(err)
	}
	all := delivery.FailedRange{From: f.clock.Now().Add(-48 * time.Hour), To: f.clock.Now(), Limit: 10}
	if _, err := f.store.UpdateEndpoint(ctx, f.m.ID, list[0].ID, delivery.EndpointSpec{Enabled: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	if r, err := f.store.ReplayFailed(ctx, f.m.ID, all); err != nil || r.Replayed != 0 {
		t.Errorf("replay-failed while endpoint one is disabled: %+v, %v", r, err)
	}
	if _, err := f.store.UpdateEndpoint(ctx, f.m.ID, list[0].ID, delivery.EndpointSpec{Enabled: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if r, err := f.store.ReplayFailed(ctx, f.m.ID, all); err != nil || r.Replayed != 1 {
		t.Errorf("replay-failed once endpoint one is enabled: %+v, %v", r, err)
	}
}
