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
// the sequence stays gapless. The commands are gathered without timing: a
// batch of the merchant is held at its COMMIT by a hook while all twenty
// queue behind it (the shard sets them aside, Stats().Deferred counts them),
// so that they are one batch however slow the machine is; the deadline only
// turns a hang into a failure.
func TestGroupCommitIsolatesFailingCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Two batches in flight: while the held one waits for its COMMIT the
	// shard goes on taking commands, and sets the merchant's aside.
	l := newLedger(t, ledger.Config{Shards: 1, BatchesInFlight: 2})
	m := newMerchant(t, l, "USD")
	deposit(t, l, m.ID, "USD", 100_00)

	hold, held := make(chan struct{}), make(chan struct{})
	var holdOnce, releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(hold) }) }
	t.Cleanup(release) // on a failure, before the ledger closes
	ledger.SetBeforeCommit(l, func([]int64) {
		first := false
		holdOnce.Do(func() { first = true })
		if first {
			close(held)
			<-hold
		}
	})
	const wait = time.Minute
	blocker := make(chan error, 1)
	go func() {
		_, err := l.Deposit(ctx, m.ID, "USD", 1_00, nil)
		blocker <- err
	}()
	select {
	case <-held:
	case <-time.After(wait):
		t.Fatal("the first batch never reached its COMMIT")
	}
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
	for start := time.Now(); l.Stats().Deferred-before.Deferred < n; time.Sleep(time.Millisecond) {
		if time.Since(start) > wait {
			t.Fatalf("%d of %d commands queued behind the held batch", l.Stats().Deferred-before.Deferred, n)
		}
	}
	release()
	if err := <-blocker; err != nil {
		t.Fatalf("the held deposit: %v", err)
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
