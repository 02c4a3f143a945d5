package delivery_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/delivery"
)

// statementCounter counts the statements bun sends on one database.
type statementCounter struct{ n atomic.Int64 }

func (c *statementCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *statementCounter) AfterQuery(context.Context, *bun.QueryEvent) {}

// TestClaimBatchReadsSecretsOnce: a claim batch is one statement once the
// endpoint's webhook secret has been opened (bench row 6a's regression was
// a second statement, reading and opening the secrets, in every batch); a
// roll — by this store or by another gateway instance on the same database
// — is seen at the next claim, which signs with the new secrets.
func TestClaimBatchReadsSecretsOnce(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	rc, m, _, c := newCapturedShop(t, f, "Cached")
	counter := &statementCounter{}
	f.l.DB().AddQueryHook(counter)
	flip := true
	claimed := func() int64 { // one more card event, claimed and sent; the claim's statements
		t.Helper()
		toggle(t, f, m.ID, c.CardNo, &flip)
		before := counter.n.Load()
		list, err := f.store.ClaimDeliveries(ctx, 256, 30*time.Second)
		if err != nil || len(list) != 1 {
			t.Fatalf("claimed %d, %v", len(list), err)
		}
		n := counter.n.Load() - before
		res := f.send.SendSigned(ctx, list[0].URL, list[0].Body, list[0].Signing())
		if err := f.store.RecordDelivery(ctx, &list[0], delivery.DeliveryOutcome{OK: res.OK, Status: res.Status}); err != nil || !res.OK {
			t.Fatalf("recorded %+v: %v", res, err)
		}
		return n
	}
	claimed() // the first batch gives the merchant its first secret: more statements
	for i := range 3 {
		if n := claimed(); n != 1 {
			t.Errorf("claim batch %d made %d statements, want 1 (the claim)", i+2, n)
		}
	}

	s1, err := f.store.RollWebhookSecret(ctx, m.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	claimed()
	if err := verifyStd(rc.last(t), s1.Secret, f.clock.Now()); err != nil {
		t.Errorf("after a roll on this store, the new secret: %v", err)
	}

	// Another instance rolls: this store has no word of it but the row's
	// roll time, which its next claim reads.
	f.clock.Add(time.Second)
	other := delivery.NewStore(f.l.Ledger, f.sealer)
	s2, err := other.RollWebhookSecret(ctx, m.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if n := claimed(); n != 1 {
		t.Errorf("the claim after another instance's roll made %d statements, want 1", n)
	}
	for _, s := range []string{s1.Secret, s2.Secret} {
		if err := verifyStd(rc.last(t), s, f.clock.Now()); err != nil {
			t.Errorf("after another instance's roll with overlap: %v", err)
		}
	}
	// The overlap's end is judged at each claim, not cached.
	f.clock.Add(time.Hour + time.Second)
	claimed()
	if err := verifyStd(rc.last(t), s1.Secret, f.clock.Now()); err == nil {
		t.Error("after the overlap the replaced secret still signs")
	}
}

// toggle freezes the card, or unfreezes it when *frozen says so: one more
// card event each time.
func toggle(t *testing.T, f *fixture, merchant int64, cardNo string, frozen *bool) {
	t.Helper()
	var err error
	if *frozen {
		_, err = f.l.Cards.FreezeCard(context.Background(), merchant, cardNo, "", nil)
	} else {
		_, err = f.l.Cards.UnfreezeCard(context.Background(), merchant, cardNo, nil)
	}
	*frozen = !*frozen
	if err != nil {
		t.Fatal(err)
	}
}
