package ledger_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgtest"
	"github.com/paygate/gateway/postings"
)

// A COMMIT that goes unanswered (the server froze after the batch's
// statements: a blackhole proxy stops forwarding just before it) is answered
// 503 outcome_unknown within the commit deadline, not the batch's 20 s, and
// its connection is closed, never handed out again.
func TestUnansweredCommitIsBoundedAndDiscardsItsConnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := pgtest.NewDatabase(t)
	bh := pgtest.NewBlackhole(t, u)
	db, err := database.OpenDB(ctx, bh.URL(u), database.DBOptions{ConnectTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	const commitTimeout = time.Second
	l := newLedgerOn(t, db, ledger.Config{Shards: 1, CommitTimeout: commitTimeout})
	m := newMerchant(t, l, "USD")
	deposit(t, l, m.ID, "USD", 100)

	var armed atomic.Bool
	ledger.SetBeforeCommit(l, func([]int64) {
		if armed.Load() {
			bh.Freeze()
		}
	})
	armed.Store(true)
	start := time.Now()
	_, err = l.Deposit(ctx, m.ID, "USD", 100, nil)
	took := time.Since(start)
	var pe *postings.Error
	if !errors.As(err, &pe) || pe.Code != postings.EUNAVAILABLE || pe.Reason != postings.ReasonOutcomeUnknown {
		t.Fatalf("a deposit whose COMMIT went unanswered: %v, want EUNAVAILABLE outcome_unknown", err)
	}
	// Generous for a loaded machine, and well below the batch's 20 s.
	if limit := commitTimeout + 8*time.Second; took > limit {
		t.Errorf("the unanswered COMMIT was answered after %s, want within the commit deadline (%s) and a margin: %s",
			took.Round(time.Millisecond), commitTimeout, limit)
	}
	// The connection that carried it is closed by the client: the proxy sees
	// its end (nothing else closes a connection to the frozen server here).
	deadline := time.Now().Add(10 * time.Second)
	for bh.ClosedWhileFrozen() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the connection whose COMMIT went unanswered was not closed: it would be pooled again")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
