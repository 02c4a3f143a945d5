package delivery_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

func ptr[T any](v T) *T { return &v }

func reason(err error) postings.Reason {
	var pe *postings.Error
	if errors.As(err, &pe) {
		return pe.Reason
	}
	return ""
}

// TestWebhookEndpoints: every merchant has endpoint one (its default URL);
// another endpoint receives only its event types, signed with its own
// secret, and a disabled one nothing; the event's detail shows a delivery
// with its attempts per endpoint; a roll signs with both secrets; the 17th
// live endpoint is refused, a deleted one frees its place without giving
// its number again and fails its pending deliveries; another merchant's
// endpoint is unknown.
func TestWebhookEndpoints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	rc, m, _, c := newCapturedShop(t, f, "Endpoints")
	list, err := f.store.Endpoints(ctx, m.ID)
	if err != nil || len(list) != 1 || list[0].No != 1 || list[0].URL != rc.srv.URL+"/hooks" || list[0].EventTypes != nil || !list[0].Enabled {
		t.Fatalf("a new merchant's endpoints: %+v, %v", list, err)
	}
	two := newCapturer(t)
	ep2, err := f.store.CreateEndpoint(ctx, m.ID, delivery.EndpointSpec{URL: ptr(two.srv.URL + "/two"), EventTypes: &[]string{"card.frozen"}})
	if err != nil || ep2.Secret == "" || ep2.No != 2 {
		t.Fatalf("create: %+v, %v", ep2, err)
	}
	three := newCapturer(t)
	if _, err := f.store.CreateEndpoint(ctx, m.ID, delivery.EndpointSpec{URL: ptr(three.srv.URL), Enabled: ptr(false)}); err != nil {
		t.Fatal(err)
	}

	d := f.dispatcher(nil)
	if _, err := f.l.Cards.FreezeCard(ctx, m.ID, c.CardNo, "", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.l.Cards.UnfreezeCard(ctx, m.ID, c.CardNo, nil); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		round(t, d)
	}
	two.mu.Lock()
	got := append([]captured(nil), two.got...)
	two.mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("endpoint two received %d callbacks, want 1 (card.frozen only)", len(got))
	}
	var body struct {
		EventID   string `json:"event_id"`
		EventType string `json:"event_type"`
	}
	if err := json.Unmarshal(got[0].body, &body); err != nil || body.EventType != "card.frozen" {
		t.Fatalf("endpoint two received %s (%v)", got[0].body, err)
	}
	if err := verifyStd(got[0], ep2.Secret, f.clock.Now()); err != nil {
		t.Errorf("endpoint two's callback does not verify with its secret: %v", err)
	}
	s1, err := f.store.RollWebhookSecret(ctx, m.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := verifyStd(got[0], s1.Secret, f.clock.Now()); err == nil {
		t.Error("endpoint two's callback verifies with endpoint one's secret")
	}
	three.mu.Lock()
	if len(three.got) != 0 {
		t.Errorf("a disabled endpoint received %d callbacks", len(three.got))
	}
	three.mu.Unlock()

	detail, err := f.store.EventDetail(ctx, m.ID, body.EventID)
	if err != nil {
		t.Fatal(err)
	}
	if len(detail.Endpoints) != 2 || detail.Endpoints[0].EndpointNo != 1 || detail.Endpoints[1].EndpointID != ep2.ID ||
		detail.Endpoints[1].Status != delivery.DeliveryDelivered || len(detail.Endpoints[1].AttemptList) != 1 ||
		len(detail.Endpoints[0].AttemptList) != 1 {
		t.Errorf("the event's deliveries by endpoint: %+v", detail.Endpoints)
	}

	// A roll of endpoint two's secret with an overlap: both sign.
	roll, err := f.store.RollEndpointSecret(ctx, m.ID, ep2.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.l.Cards.FreezeCard(ctx, m.ID, c.CardNo, "", nil); err != nil {
		t.Fatal(err)
	}
	round(t, d)
	last := two.last(t)
	for _, s := range []string{ep2.Secret, roll.Secret} {
		if err := verifyStd(last, s, f.clock.Now()); err != nil {
			t.Errorf("during endpoint two's roll: %v", err)
		}
	}

	// Sixteen live endpoints at most; a deleted one frees a place.
	for i := 4; i <= delivery.EndpointsMax; i++ {
		if _, err := f.store.CreateEndpoint(ctx, m.ID, delivery.EndpointSpec{URL: ptr(three.srv.URL)}); err != nil {
			t.Fatalf("endpoint %d: %v", i, err)
		}
	}
	_, err = f.store.CreateEndpoint(ctx, m.ID, delivery.EndpointSpec{URL: ptr(three.srv.URL)})
	if reason(err) != postings.ReasonWebhookEndpointsMax {
		t.Fatalf("the 17th endpoint: %v", err)
	}
	// Endpoint two has a pending delivery when it is deleted: it fails.
	if _, err := f.l.Cards.UnfreezeCard(ctx, m.ID, c.CardNo, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.l.Cards.FreezeCard(ctx, m.ID, c.CardNo, "", nil); err != nil {
		t.Fatal(err)
	}
	if err := f.store.DeleteEndpoint(ctx, m.ID, ep2.ID); err != nil {
		t.Fatal(err)
	}
	newest, err := f.store.Deliveries(ctx, m.ID, "", 1)
	if err != nil || len(newest) != 1 {
		t.Fatal(newest, err)
	}
	if dd, err := f.store.EventDetail(ctx, m.ID, newest[0].EventID); err != nil || len(dd.Endpoints) < 2 ||
		dd.Endpoints[1].EndpointID != ep2.ID || dd.Endpoints[1].Status != delivery.DeliveryFailed || dd.Endpoints[1].LastError == nil {
		t.Errorf("a deleted endpoint's pending delivery: %+v, %v", dd.Endpoints, err)
	}
	if _, err := f.store.Endpoint(ctx, m.ID, ep2.ID); reason(err) != postings.ReasonWebhookEndpoint {
		t.Errorf("a deleted endpoint reads as %v", err)
	}
	again, err := f.store.CreateEndpoint(ctx, m.ID, delivery.EndpointSpec{URL: ptr(three.srv.URL)})
	if err != nil || again.No != delivery.EndpointsMax+1 {
		t.Fatalf("after a delete: %+v, %v (a number is never given again)", again, err)
	}
	if err := f.store.DeleteEndpoint(ctx, m.ID, list[0].ID); err == nil {
		t.Error("endpoint one was deleted")
	}
	if _, err := f.store.CreateEndpoint(ctx, m.ID, delivery.EndpointSpec{URL: ptr(three.srv.URL), EventTypes: &[]string{"card.melted"}}); err == nil {
		t.Error("an unknown event type was taken")
	}

	// Another merchant's endpoint is exactly an unknown one.
	other, _, err := f.l.CreateMerchant(ctx, merchant.Spec{Name: "Other", Currencies: []string{"USD"}})
	if err != nil {
		t.Fatal(err)
	}
	_, errOther := f.store.Endpoint(ctx, other.ID, again.ID)
	_, errUnknown := f.store.Endpoint(ctx, other.ID, "we_aaaaaaaaaaaaaaaaaaaaaaaa")
	if reason(errOther) != postings.ReasonWebhookEndpoint || errOther.Error() == "" ||
		len(errOther.Error()) != len(errUnknown.Error()) {
		t.Errorf("another merchant's endpoint: %v; an unknown one: %v", errOther, errUnknown)
	}
	if _, err := f.store.UpdateEndpoint(ctx, other.ID, again.ID, delivery.EndpointSpec{Enabled: ptr(false)}); reason(err) != postings.ReasonWebhookEndpoint {
		t.Errorf("another merchant's endpoint updated: %v", err)
	}
}

// TestEndpointSecretVerifiesWithNPM: a real delivery to an endpoint other
// than endpoint one verifies with that endpoint's secret under the
// unmodified npm libraries (standardwebhooks, svix), and not with the
// merchant's (endpoint one's) secret.
func TestEndpointSecretVerifiesWithNPM(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	_, m, _, c := newCapturedShop(t, f, "NPM")
	two := newCapturer(t)
	ep, err := f.store.CreateEndpoint(ctx, m.ID, delivery.EndpointSpec{URL: ptr(two.srv.URL)})
	if err != nil {
		t.Fatal(err)
	}
	one, err := f.store.RollWebhookSecret(ctx, m.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	flip := true
	toggle(t, f, m.ID, c.CardNo, &flip)
	round(t, f.dispatcher(nil))
	cb := two.last(t)
	hs := map[string]string{}
	for k := range cb.header {
		hs[strings.ToLower(k)] = cb.header.Get(k)
	}
	cases := []struct {
		secret string
		ok     bool
	}{{ep.Secret, true}, {one.Secret, false}}
	in := make([]nodeCase, len(cases))
	for i, tc := range cases {
		in[i] = nodeCase{Headers: hs, Body: string(cb.body), Secret: tc.secret}
	}
	// Without a default URL, an event still goes to endpoint two, and a
	// replay of it is not refused for want of a URL.
	if err := f.l.SetCallbackURL(ctx, m.ID, ""); err != nil {
		t.Fatal(err)
	}
	f.l.Merchants.MerchantChanged(m.ID)
	toggle(t, f, m.ID, c.CardNo, &flip)
	round(t, f.dispatcher(nil))
	newest, err := f.store.Deliveries(ctx, m.ID, "", 1)
	// Its status is endpoint two's, the one delivery; endpoint one's fields
	// are empty (it had no URL).
	if err != nil || len(newest) != 1 || newest[0].Status != delivery.DeliveryDelivered || newest[0].URL != "" ||
		len(newest[0].Deliveries) != 1 || newest[0].Deliveries[0].EndpointNo != 2 {
		t.Fatalf("the newest event: %+v, %v", newest, err)
	}
	if _, err := f.store.ReplayEvent(ctx, m.ID, newest[0].EventID); err != nil {
		t.Errorf("a replay to endpoint two alone: %v", err)
	}
	for i, v := range verifyWithNode(t, in) {
		if std, svix := v.accepted(); std != cases[i].ok || svix != cases[i].ok {
			t.Errorf("case %d: standardwebhooks %v, svix %v; want accepted %v", i, v.StandardWebhooks, v.Svix, cases[i].ok)
		}
	}
}
