package ledger_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/paygate/gateway/ledger"
)

// While a batch waits for its COMMIT, the shard begins the next batch of
// other merchants, but never a second batch of a merchant in flight: that
// merchant's next command waits, in order, for the first to end (writer.go,
// docs/performance.md "One merchant against sixteen"). The first batch is
// held at its COMMIT by a hook, so nothing here depends on timing; the
// deadline only turns a hang into a failure.
func TestNextBatchBeginsDuringCommitOnlyForOtherMerchants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{Shards: 1, BatchesInFlight: 2})
	x, y := newMerchant(t, l, "USD"), newMerchant(t, l, "USD")

	var (
		mu       sync.Mutex
		xBatches int
		released bool
	)
	hold, held := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(hold) }) }
	// On a failure, let the held batch go before the ledger closes (the
	// cleanups run in reverse order).
	t.Cleanup(release)
	ledger.SetBeforeCommit(l, func(ms []int64) {
		if len(ms) != 1 || ms[0] != x.ID {
			return
		}
		mu.Lock()
		xBatches++
		first, early := xBatches == 1, !released
		mu.Unlock()
		if first {
			close(held)
			<-hold
			return
		}
		if early {
			t.Errorf("a second batch of merchant %d reached its COMMIT while the first was still committing", x.ID)
		}
	})
	const deadline = 60 * time.Second
	deposit := func(m int64) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := l.Deposit(ctx, m, "USD", 1_00, nil)
			done <- err
		}()
		return done
	}
	wait := func(what string, done <-chan error) {
		t.Helper()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		case <-time.After(deadline):
			t.Fatalf("%s did not end", what)
		}
	}

	x1 := deposit(x.ID)
	select {
	case <-held:
	case <-time.After(deadline):
		t.Fatal("the first batch of X never reached its COMMIT")
	}
	before := l.Stats().Deferred
	x2 := deposit(x.ID)
	// X's second command must be set aside, not started.
	for start := time.Now(); l.Stats().Deferred == before; time.Sleep(time.Millisecond) {
		if time.Since(start) > deadline {
			t.Fatal("X's second command was never set aside")
		}
	}
	// Y's command runs, and commits, while X's first batch is held.
	wait("Y's deposit while X's batch was held at its COMMIT", deposit(y.ID))

	mu.Lock()
	released = true
	mu.Unlock()
	release()
	wait("X's first deposit", x1)
	wait("X's second deposit", x2)
	mu.Lock()
	if xBatches != 2 {
		t.Errorf("X's deposits took %d batches, want 2 (the second waited for the first)", xBatches)
	}
	mu.Unlock()
	ledger.SetBeforeCommit(l, nil)
	for _, c := range []struct {
		m    int64
		want int64
	}{{x.ID, 2_00}, {y.ID, 1_00}} {
		if got, err := l.Balance(ctx, fund(c.m, "USD")); err != nil || got != c.want {
			t.Errorf("merchant %d funding = %d (%v), want %d", c.m, got, err, c.want)
		}
	}
	mustVerify(t, l)
}
