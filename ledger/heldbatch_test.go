package ledger_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
)

// heldBatch gathers commands into one batch without timing: a first batch
// of the merchant (a deposit) is held at its COMMIT by the hook while the
// commands queue behind it (the shard sets them aside, Stats().Deferred
// counts them), so that they are one batch however slow the machine is;
// the deadline only turns a hang into a failure. The ledger has one shard
// and two batches in flight, so that the shard goes on taking commands
// while the first waits.
type heldBatch struct {
	l       *ledger.Ledger
	m       *merchant.Merchant // in USD, funded with 100_00 before the held deposit of 1_00
	before  ledger.Stats       // the stats once the first batch is held
	batches atomic.Int32       // batches that reached their COMMIT, the held one first
	hold    chan struct{}
	opened  sync.Once
	blocker chan error
}

const heldBatchWait = time.Minute

// holdFirstBatch makes the ledger and the merchant and holds the
// merchant's next batch at its COMMIT; each later batch calls then (nil:
// nothing) with its number, 2 onwards, right before its COMMIT.
func holdFirstBatch(t *testing.T, then func(batch int32)) *heldBatch {
	t.Helper()
	l := newLedger(t, ledger.Config{Shards: 1, BatchesInFlight: 2})
	h := &heldBatch{l: l, m: newMerchant(t, l, "USD"), hold: make(chan struct{}), blocker: make(chan error, 1)}
	deposit(t, l, h.m.ID, "USD", 100_00)
	held := make(chan struct{})
	t.Cleanup(h.open) // on a failure, before the ledger closes
	ledger.SetBeforeCommit(l, func([]int64) {
		switch n := h.batches.Add(1); {
		case n == 1:
			close(held)
			<-h.hold
		case then != nil:
			then(n)
		}
	})
	go func() {
		_, err := l.Deposit(context.Background(), h.m.ID, "USD", 1_00, nil)
		h.blocker <- err
	}()
	select {
	case <-held:
	case <-time.After(heldBatchWait):
		t.Fatal("the first batch never reached its COMMIT")
	}
	h.before = l.Stats()
	return h
}

func (h *heldBatch) open() { h.opened.Do(func() { close(h.hold) }) }

// releaseAfter waits until n commands are queued behind the held batch,
// then lets it commit (it deposits 1_00).
func (h *heldBatch) releaseAfter(t *testing.T, n int64) {
	t.Helper()
	for start := time.Now(); h.l.Stats().Deferred-h.before.Deferred < n; time.Sleep(time.Millisecond) {
		if time.Since(start) > heldBatchWait {
			t.Fatalf("%d of %d commands queued behind the held batch", h.l.Stats().Deferred-h.before.Deferred, n)
		}
	}
	h.open()
	if err := <-h.blocker; err != nil {
		t.Fatalf("the held deposit: %v", err)
	}
}
