package ledger_test

import (
	"context"
	"sync"
	"testing"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Concurrent appends for one hot merchant are committed together, and one
// that would overdraw fails alone: the others commit, it leaves no trace, and
// the sequence stays gapless. The twenty commands are gathered into one
// batch without timing, behind a held one (holdFirstBatch).
func TestGroupCommitIsolatesFailingCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := holdFirstBatch(t, nil)
	l, m, before := h.l, h.m, h.before

	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			amount := int64(1_00)
			if i == 7 {
				amount = 1_000_00 // cannot be paid
			}
			card := cardAvail(m.ID, "USD", "crd_"+string(rune('a'+i)))
			_, errs[i] = l.Append(ctx, ledger.Batch{Merchant: m.ID, Entries: []postings.Entry{
				move(m.ID, postings.KindCardFund, fund(m.ID, "USD"), card, amount)}})
		}(i)
	}
	h.releaseAfter(t, n)
	wg.Wait()
	for i, err := range errs {
		if i == 7 {
			if postings.ErrorCode(err) != postings.EINSUFFICIENT {
				t.Errorf("the overdrawing command: %v, want EINSUFFICIENT", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("command %d: %v", i, err)
		}
	}
	after := l.Stats()
	// The held deposit's transaction and one for the twenty.
	if batches := after.Batches - before.Batches; batches != 2 {
		t.Errorf("the held batch and %d queued commands took %d transactions; want 2", n, batches)
	}
	if after.Splits != before.Splits {
		t.Errorf("a business failure split the batch; it should fail alone inside it")
	}
	if got, _ := l.Balance(ctx, fund(m.ID, "USD")); got != 101_00-19*1_00 {
		t.Errorf("funding = %d, want %d", got, 101_00-19*1_00)
	}
	if got, _ := l.Balance(ctx, cardAvail(m.ID, "USD", "crd_"+string(rune('a'+7)))); got != 0 {
		t.Errorf("the failed command's card has %d", got)
	}
	recs, _ := l.Entries(ctx, m.ID, 1, 100, 0)
	if len(recs) != 2+19 || recs[len(recs)-1].Seq != 21 {
		t.Errorf("%d entries, last seq %d; want 21 gapless", len(recs), recs[len(recs)-1].Seq)
	}
	mustVerify(t, l)
}

// With the database gone, every queued command is answered EUNAVAILABLE
// (nothing of it happened; the caller retries with its key), not an
// internal error.
func TestUnavailableDatabaseAnswersUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{Shards: 1})
	m := newMerchant(t, l, "USD")
	deposit(t, l, m.ID, "USD", 100_00)
	l.DB().Close()
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, errs[i] = l.Deposit(ctx, m.ID, "USD", 1_00, nil)
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if postings.ErrorCode(err) != postings.EUNAVAILABLE {
			t.Errorf("deposit %d: %v, want EUNAVAILABLE", i, err)
		}
	}
}
