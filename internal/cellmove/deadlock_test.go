package cellmove

import (
	"context"
	"testing"
	"time"
)

// The removal at the source takes the merchant's head first, as the
// ledger's writer does (its batch locks the heads before anything else):
// a batch of the moved merchant still reaching the source (a router's
// cache not yet forwarding) then waits for the removal, or the removal
// for it, instead of each holding what the other needs. Before, the
// removal deleted the merchant's balances first and its head last, and
// such a batch (head locked, then its balances) deadlocked with it: the
// resumed move failed (chaos movekill, "removing …: ledger_heads:
// deadlock detected"). Here a transaction plays the batch: it locks the
// head, waits until the removal is blocked, then locks the balances.
func TestRemovalTakesTheHeadFirst(t *testing.T) {
	c := newTwoCells(t)
	business(t, c.g, c.m.ID)
	killAt(t, c, "remove")
	ctx := context.Background()
	batch, err := c.src.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer batch.Rollback()
	if _, err := batch.ExecContext(ctx, "select 1 from ledger_heads where merchant_id = ? for update", c.m.ID); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.mv.Move(ctx, c.m.ShopNo)
		done <- err
	}()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		var waiting int
		if err := c.src.NewRaw(`select count(*) from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`).
			Scan(ctx, &waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the removal never waited for the head")
		}
	}
	if _, err := batch.ExecContext(ctx, "select 1 from balances where merchant_id = ? for update", c.m.ID); err != nil {
		t.Fatalf("the batch's balances: %v", err)
	}
	if err := batch.Rollback(); err != nil { // the fence refuses such a batch: nothing of it stays
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the resumed move: %v", err)
	}
	if left := merchantRows(t, c.src, c.m.ID); len(left) != 0 {
		t.Errorf("the source still has %v", left)
	}
}
