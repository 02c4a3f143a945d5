package delivery_test

import (
	"context"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// Every attempt is kept, not only the last: two refused by a receiver that
// is down (HTTP 503, each with its next attempt), the third delivered; a
// replay starts a new window numbered from 1. Another merchant's event is
// unknown.
func TestEveryAttemptIsKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	f.recv.down.Store(true)
	f.card(t, f.recv.srv.URL)
	d := f.dispatcher(nil)
	var sentAt []time.Time
	for i := 0; i < 3; i++ {
		if i == 2 {
			f.recv.down.Store(false)
		}
		sentAt = append(sentAt, f.clock.Now())
		if n := round(t, d); n != 1 {
			t.Fatalf("round %d sent %d", i, n)
		}
		if info := f.deliveries(t)[cards.EventCardCreated]; info.NextAttemptAt != nil {
			f.clock.Add(info.NextAttemptAt.Sub(f.clock.Now()))
		}
	}
	ev := f.deliveries(t)[cards.EventCardCreated]
	as, err := f.store.Attempts(ctx, f.m.ID, ev.EventID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 3 {
		t.Fatalf("%d attempts kept, want 3: %+v", len(as), as)
	}
	for i, a := range as {
		wantOutcome, wantStatus := delivery.DeliveryPending, 503
		if i == 2 {
			wantOutcome, wantStatus = delivery.DeliveryDelivered, 200
		}
		if a.Attempt != i+1 || a.Outcome != wantOutcome || a.HTTPStatus == nil || *a.HTTPStatus != wantStatus ||
			!a.At.Equal(sentAt[i]) || a.DurationMs < 0 || (wantOutcome == delivery.DeliveryPending) != (a.NextAttemptAt != nil) {
			t.Errorf("attempt %d: %+v (sent at %v)", i+1, a, sentAt[i])
		}
	}
	if !as[0].NextAttemptAt.Equal(sentAt[1]) {
		t.Errorf("attempt 1's next attempt %v, attempt 2 was at %v", as[0].NextAttemptAt, sentAt[1])
	}

	// A replay: a new window, numbered from 1 again.
	if _, err := f.store.ReplayEvent(ctx, f.m.ID, ev.EventID); err != nil {
		t.Fatal(err)
	}
	round(t, d)
	as, err = f.store.Attempts(ctx, f.m.ID, ev.EventID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 4 || as[3].Attempt != 1 || as[3].Outcome != delivery.DeliveryDelivered || !as[3].WindowStart.After(as[2].WindowStart) {
		t.Fatalf("after the replay: %+v", as)
	}
	// The newest ones when bounded, still oldest first.
	if as, err := f.store.Attempts(ctx, f.m.ID, ev.EventID, 2); err != nil || len(as) != 2 || as[1].Attempt != 1 || as[0].Attempt != 3 {
		t.Errorf("the newest 2: %+v %v", as, err)
	}

	other, _, err := f.l.CreateMerchant(ctx, merchant.Spec{Name: "Other", Currencies: []string{"USD"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{ev.EventID, "evt_unknown"} {
		if _, err := f.store.Attempts(ctx, other.ID, id, 0); postings.ErrorCode(err) != postings.ENOTFOUND {
			t.Errorf("another merchant's attempts of %s: %v, want ENOTFOUND", id, err)
		}
	}
}

// An attempt whose record is lost (a crash after the send) is in neither
// the delivery nor the attempts: the two are written by one statement.
func TestLostRecordKeepsNoAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	f.card(t, f.recv.srv.URL)
	lost := &lostRecord{Store: f.store, seen: map[int64]bool{}}
	if _, err := f.dispatcher(lost).Round(ctx); err == nil {
		t.Fatal("the lost record was not lost")
	}
	ev := f.deliveries(t)[cards.EventCardCreated]
	as, err := f.store.Attempts(ctx, f.m.ID, ev.EventID, 0)
	if err != nil || len(as) != 0 || ev.Attempts != 1 || ev.Status != delivery.DeliveryPending {
		t.Fatalf("after a lost record: %+v %v, delivery %+v", as, err, ev)
	}
}
