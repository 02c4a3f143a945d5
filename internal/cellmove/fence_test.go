package cellmove

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/paygate/gateway/postings"
)

// fenceCalls updates the merchant's head as a batch does (a column the
// batch writes, the fence column untouched) inside a transaction whose
// function calls PostgreSQL counts (track_functions = all, this
// transaction only), and returns how often the fence's function ran and
// the update's error. fenced sets the fence first, as the mover's pause
// does. Nothing is left behind.
func fenceCalls(t *testing.T, db *bun.DB, merchant int64, fenced bool) (int64, error) {
	t.Helper()
	ctx := context.Background()
	var calls int64
	var updErr error
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "set local track_functions = 'all'"); err != nil {
			return err
		}
		if fenced {
			if err := setFence(ctx, tx, merchant, true); err != nil {
				return err
			}
		}
		// The refused update aborts only its savepoint; the count is
		// read after it.
		if _, err := tx.ExecContext(ctx, "savepoint batch"); err != nil {
			return err
		}
		if _, updErr = tx.ExecContext(ctx, "update ledger_heads set last_ts = last_ts where merchant_id = ?", merchant); updErr != nil {
			if _, err := tx.ExecContext(ctx, "rollback to savepoint batch"); err != nil {
				return err
			}
		}
		if err := tx.NewRaw("select coalesce(pg_stat_get_xact_function_calls('cellmove_fence'::regproc), 0)").Scan(ctx, &calls); err != nil {
			return err
		}
		// The count is real: a function of this transaction that ran
		// once is counted once. (A function that raised, as the fence
		// does, is not counted at all: a refused update proves the run.)
		var probe int64
		for _, q := range []string{"create function pg_temp.fence_probe() returns int language plpgsql as 'begin return 1; end'",
			"select pg_temp.fence_probe()"} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		if err := tx.NewRaw("select coalesce(pg_stat_get_xact_function_calls('pg_temp.fence_probe'::regproc), 0)").Scan(ctx, &probe); err != nil {
			return err
		}
		if probe != 1 {
			t.Fatalf("PostgreSQL counted %d calls of a function called once", probe)
		}
		return errRollback
	})
	if err != errRollback {
		t.Fatal(err)
	}
	return calls, updErr
}

// The fence costs an unfenced merchant's batch nothing: the trigger's
// WHEN, which reads only the row, keeps its function from running at all
// (sql/0035's ran it, with two index probes, on every batch). A fenced
// head's update runs it and is refused as lock_not_available.
func TestFenceRunsOnlyForAFencedHead(t *testing.T) {
	c := newTwoCells(t)
	business(t, c.g, c.m.ID)
	cases := []struct {
		name    string
		fenced  bool
		calls   int64
		refused bool
	}{
		{"unfenced", false, 0, false},
		{"fenced", true, 0, true}, // ran, and raised: not counted
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls, err := fenceCalls(t, c.src, c.m.ID, tc.fenced)
			var pg *pgconn.PgError
			got := errors.As(err, &pg) && pg.Code == "55P03"
			if got != tc.refused || (!got && err != nil) {
				t.Errorf("update: %v, want refused=%v", err, tc.refused)
			}
			if calls != tc.calls {
				t.Errorf("the fence's function ran %d times, want %d", calls, tc.calls)
			}
		})
	}
}

// The pause fences the merchant at the source only: its batches there are
// refused as unavailable (503, nothing written), the target's copy of the
// head is unfenced (the copy reads the column as false), and a roll-back
// lifts the fence with its record.
func TestPauseFencesTheSourceAndRollbackLiftsIt(t *testing.T) {
	c := newTwoCells(t)
	business(t, c.g, c.m.ID)
	ctx := context.Background()
	killAt(t, c, "verify") // paused, the tail copied
	before, err := readHead(ctx, c.src, c.m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.g.Deposit(ctx, c.m.ID, "USD", 1_00, idem("ledger")); postings.ErrorCode(err) != postings.EUNAVAILABLE {
		t.Errorf("a deposit of a paused merchant: %v, want EUNAVAILABLE", err)
	}
	if after, err := readHead(ctx, c.src, c.m.ID); err != nil || !after.equal(before) {
		t.Errorf("the refused deposit moved the head: %+v (%v), was %+v", after, err, before)
	}
	fenced := func(db *bun.DB) bool {
		t.Helper()
		var f bool
		if err := db.NewRaw("select cellmove_fenced from ledger_heads where merchant_id = ?", c.m.ID).Scan(ctx, &f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	if !fenced(c.src) || fenced(c.dst) {
		t.Errorf("paused: source fenced=%v, target fenced=%v; want true, false", fenced(c.src), fenced(c.dst))
	}
	if err := c.mv.Rollback(ctx, c.m.ShopNo); err != nil {
		t.Fatal(err)
	}
	if fenced(c.src) {
		t.Error("the roll-back left the fence")
	}
	if _, err := c.g.Deposit(ctx, c.m.ID, "USD", 1_00, idem("ledger")); err != nil {
		t.Errorf("a deposit after the roll-back: %v", err)
	}
}
