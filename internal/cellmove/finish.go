package cellmove

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// switchOver switches the directory to the target, marks the arrival
// complete (from then on the target's rows are the merchant's, out of the
// mover's reach) and records the switch and the tombstone at the source.
// Each part is idempotent, so a mover killed between them repeats them.
// It returns the pause: from pauseStart when this process paused the
// merchant, else from the pause recorded at the source.
func (mv *Mover) switchOver(ctx context.Context, r *record, pauseStart time.Time) (time.Duration, error) {
	if err := mv.Dir.Switch(ctx, r.ShopNo, r.To); err != nil {
		return 0, fmt.Errorf("cellmove: directory: %w", err)
	}
	pause := time.Since(pauseStart)
	if pauseStart.IsZero() {
		var err error
		if pause, err = pauseSince(ctx, mv.From.DB, r); err != nil {
			return 0, err
		}
	}
	if err := mv.To.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewRaw(`update cellmove_arrivals set state = 'arrived', finished_at = now()
			where merchant_id = ? and state = 'copying'`, r.Merchant).Exec(ctx); err != nil {
			return err
		}
		return unforwardArrived(ctx, tx, r.Merchant)
	}); err != nil {
		return 0, fmt.Errorf("cellmove: recording the arrival: %w", err)
	}
	mv.at("tombstone")
	err := mv.From.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewRaw(`insert into cellmove_tombstones (move_id, shop_no, merchant_id, last_seq, last_hash, to_cell, moved_at)
			select ?, ?, merchant_id, last_seq, last_hash, ?, now() from ledger_heads where merchant_id = ?`,
			r.ID, r.ShopNo, r.To, r.Merchant).Exec(ctx); err != nil {
			return fmt.Errorf("cellmove: the tombstone: %w", err)
		}
		if err := forwardAll(ctx, tx, r); err != nil {
			return fmt.Errorf("cellmove: forwarding the ids: %w", err)
		}
		if _, err := tx.NewRaw("update cellmove_moves set switched_at = now(), pause_ms = ? where id = ?", pause.Milliseconds(), r.ID).Exec(ctx); err != nil {
			return err
		}
		return advance(ctx, tx, r, StateSwitched)
	})
	return pause, err
}

// removeSource removes the merchant's rows at the source as gateway_mover,
// which the journal's guard lets through because the tombstone exists, in
// one transaction with the tombstone's removal time and the move's end.
func (mv *Mover) removeSource(ctx context.Context, r *record) error {
	return mv.From.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := removeMerchant(ctx, tx, r.Merchant); err != nil {
			return fmt.Errorf("cellmove: removing %s from %s: %w", r.ShopNo, r.From, err)
		}
		if _, err := tx.NewRaw("update cellmove_tombstones set removed_at = now() where move_id = ?", r.ID).Exec(ctx); err != nil {
			return err
		}
		return advance(ctx, tx, r, StateRemoved)
	})
}

// removeMerchant deletes every row of the merchant that a move copies (and
// the derived bill blocks), children before parents, as gateway_mover.
func removeMerchant(ctx context.Context, tx bun.Tx, merchant int64) error {
	// The removal of a large merchant is one long transaction (see begin).
	if _, err := tx.NewRaw("set local statement_timeout = 0").Exec(ctx); err != nil {
		return err
	}
	// The head first, as the ledger's writer locks it first: a batch of
	// the merchant still reaching this cell waits for the removal, or the
	// removal for it, rather than deadlocking with it on the rows between
	// (TestRemovalTakesTheHeadFirst). As the connecting user: the lock
	// needs more than the mover role's DELETE.
	if _, err := tx.NewRaw("select 1 from ledger_heads where merchant_id = ? for update", merchant).Exec(ctx); err != nil {
		return err
	}
	if _, err := tx.NewRaw("set local role " + moverRole).Exec(ctx); err != nil {
		return err
	}
	if _, err := tx.NewRaw("select set_config('cellmove.m', ?, true)", fmt.Sprint(merchant)).Exec(ctx); err != nil {
		return err
	}
	all := append(append([]table{}, removeAlso...), tables...)
	for i := len(all) - 1; i >= 0; i-- {
		if _, err := tx.NewRaw("delete from " + quoteIdent(all[i].name) + " where " + all[i].where).Exec(ctx); err != nil {
			return fmt.Errorf("%s: %w", all[i].name, err)
		}
	}
	_, err := tx.NewRaw("reset role").Exec(ctx)
	return err
}

// Rollback undoes the merchant's open move that has not verified yet: the
// target's copy is removed (gateway_mover, while the arrival is still
// being copied), the directory makes the merchant active at the source
// again and the move is recorded rolled back, which lifts the fence. A move
// that has verified may already be switched in the directory: it can only
// go forward (Move resumes it).
func (mv *Mover) Rollback(ctx context.Context, shopNo string) error {
	r, err := openMove(ctx, mv.From.DB, shopNo)
	if err != nil {
		return err
	}
	if r.State != StateCopying && r.State != StatePaused {
		return fmt.Errorf("cellmove: the move of %s is %s, past the point of return: run the move again to finish it", shopNo, r.State)
	}
	err = mv.To.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := removeMerchant(ctx, tx, r.Merchant); err != nil {
			return fmt.Errorf("cellmove: removing the copy of %s from %s: %w", shopNo, r.To, err)
		}
		_, err := tx.NewRaw(`update cellmove_arrivals set state = 'rolled_back', finished_at = now()
			where merchant_id = ? and state = 'copying'`, r.Merchant).Exec(ctx)
		return err
	})
	if err != nil {
		return err
	}
	if err := mv.Dir.Resume(ctx, shopNo, r.From); err != nil {
		return fmt.Errorf("cellmove: directory: %w", err)
	}
	// The fence is lifted, and the forwarding rows removed, with the record
	// of the roll-back: a mover killed between them finds the move open and
	// rolls it back again.
	return mv.From.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := setFence(ctx, tx, r.Merchant, false); err != nil {
			return err
		}
		if err := unforwardMove(ctx, tx, r); err != nil {
			return err
		}
		return advance(ctx, tx, r, StateRolledBack)
	})
}
