package cellmove

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// router sends a merchant's writes to the cell the directory names, as
// serve's routing does: while the merchant is moving it waits for the
// directory's next change (a request answered 503 and retried); a write
// refused as unavailable, or sent to a cell the merchant has left, is
// retried with its idempotency key where the directory now says.
type router struct {
	dir   *LocalDirectory
	cells map[string]*gatewaytest.Gateway
}

func (r *router) deposit(ctx context.Context, shopNo string, m int64, key string) error {
	for {
		cell, moving, changed := r.dir.Lookup(shopNo)
		if moving {
			select {
			case <-changed:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		_, err := r.cells[cell].Deposit(ctx, m, "USD", 1_00, &ledger.Idempotency{Scope: ledger.ScopeLedger, Key: key})
		if err == nil {
			return nil
		}
		if now, _, _ := r.dir.Lookup(shopNo); now == cell && postings.ErrorCode(err) != postings.EUNAVAILABLE {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(5 * time.Millisecond) // Retry-After, not synchronisation
	}
}

// A merchant moves while a client keeps writing to it: every write it was
// told succeeded is in the target exactly once, the source's last entry
// (the tombstone) is the target's entry at that sequence, and audit verify
// passes on both databases.
func TestMoveUnderWrites(t *testing.T) {
	c := newTwoCells(t)
	business(t, c.g, c.m.ID)
	g2 := gatewaytest.New(t, c.dst, gatewaytest.Options{Sealer: c.sealer})
	rt := &router{dir: c.dir, cells: map[string]*gatewaytest.Gateway{"a": c.g, "b": g2}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var acked atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := rt.deposit(ctx, c.m.ShopNo, c.m.ID, fmt.Sprintf("live-%d-%d", w, i)); err != nil {
					errs <- err
					return
				}
				acked.Add(1)
			}
		}()
	}
	// Let writes flow before, during and after the move.
	waitFor(t, func() bool { return acked.Load() >= 20 })
	c.mv.BackgroundRounds = 2
	res, err := c.mv.Move(ctx, c.m.ShopNo)
	if err != nil {
		t.Fatal(err)
	}
	atMove := acked.Load()
	waitFor(t, func() bool { return acked.Load() >= atMove+20 })
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a write failed: %v", err)
	}
	t.Logf("moved with %d writes acknowledged, pause %v, %d rows copied", acked.Load(), res.Pause, res.Rows)

	var live int64
	if err := c.dst.NewRaw("select count(*) from idempotency_keys where merchant_id = ? and key like 'live-%'", c.m.ID).Scan(ctx, &live); err != nil {
		t.Fatal(err)
	}
	var deposits int64
	if err := c.dst.NewRaw("select count(*) from entries where merchant_id = ? and kind = 'DEPOSIT'", c.m.ID).Scan(ctx, &deposits); err != nil {
		t.Fatal(err)
	}
	if live != acked.Load() || deposits != acked.Load()+2 { // business made 2 deposits
		t.Errorf("acknowledged %d writes; the target has %d keys and %d deposits (2 before)", acked.Load(), live, deposits)
	}
	var tombSeq int64
	var tombHash, hash []byte
	if err := c.src.NewRaw("select last_seq, last_hash from cellmove_tombstones where merchant_id = ?", c.m.ID).Scan(ctx, &tombSeq, &tombHash); err != nil {
		t.Fatal(err)
	}
	if err := c.dst.NewRaw("select hash from entries where merchant_id = ? and merchant_seq = ?", c.m.ID, tombSeq).Scan(ctx, &hash); err != nil {
		t.Fatal(err)
	}
	if string(hash) != string(tombHash) {
		t.Errorf("the target's entry %d has hash %x, the source's last was %x", tombSeq, hash, tombHash)
	}
	if left := merchantRows(t, c.src, c.m.ID); len(left) != 0 {
		t.Errorf("the source still has %v", left)
	}
	verifyAll(t, c.src)
	verifyAll(t, c.dst)
}

// waitFor waits for cond, generously: the machine is shared.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
