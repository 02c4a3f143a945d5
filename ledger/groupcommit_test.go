package ledger_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Concurrent appends for one hot merchant are committed together, and one
// that would overdraw fails alone: the others commit, it leaves no trace, and
// the sequence stays gapless.
func TestGroupCommitIsolatesFailingCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// A generous window so that all callers land in one batch.
	l := newLedger(t, ledger.Config{Shards: 1, BatchWindow: 200 * time.Millisecond})
	m := newMerchant(t, l, "USD")
	deposit(t, l, m.ID, "USD", 100_00)
	before := l.Stats()

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
	if batches := after.Batches - before.Batches; batches > 3 {
		t.Errorf("%d commands took %d transactions; group commit should need one or two", n, batches)
	}
	if after.Splits != before.Splits {
		t.Errorf("a business failure split the batch; it should fail alone inside it")
	}
	if got, _ := l.Balance(ctx, fund(m.ID, "USD")); got != 100_00-19*1_00 {
		t.Errorf("funding = %d, want %d", got, 100_00-19*1_00)
	}
	if got, _ := l.Balance(ctx, cardAvail(m.ID, "USD", "crd_"+string(rune('a'+7)))); got != 0 {
		t.Errorf("the failed command's card has %d", got)
	}
	recs, _ := l.Entries(ctx, m.ID, 1, 100, 0)
	if len(recs) != 1+19 || recs[len(recs)-1].Seq != 20 {
		t.Errorf("%d entries, last seq %d; want 20 gapless", len(recs), recs[len(recs)-1].Seq)
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
