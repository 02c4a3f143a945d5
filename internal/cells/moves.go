package cells

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
)

// The directory's side of a move (docs/scaling.md, "Moving a merchant"):
// the states and the record of it. The copy, the pause and the tombstone
// are internal/cellmove's; these are its writes to the directory, each one
// transaction, so that a move is never half-recorded.

// Outcomes of a finished move.
const (
	OutcomeSwitched   = "switched"
	OutcomeRolledBack = "rolled_back"
)

// BeginMove marks an active merchant moving to cell to and records the
// move; routers answer its requests 503 within CacheTTL. It fails when the
// merchant is not active (already moving) or to is its cell.
func (d *Directory) BeginMove(ctx context.Context, shopNo, to string) error {
	return d.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var e Entry
		if err := tx.NewRaw("select shop_no, merchant_id, cell, state from cell_directory where shop_no = ? for update", shopNo).
			Scan(ctx, &e); err != nil {
			return fmt.Errorf("moving %s: %w", shopNo, err)
		}
		if e.State != StateActive || e.Cell == to {
			return fmt.Errorf("moving %s to %s: it is %s in cell %s", shopNo, to, e.State, e.Cell)
		}
		if _, err := tx.NewRaw("update cell_directory set state = ?, updated_at = now() where shop_no = ?", StateMoving, shopNo).
			Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewRaw("insert into cell_moves (shop_no, from_cell, to_cell) values (?, ?, ?)", shopNo, e.Cell, to).Exec(ctx)
		return err
	})
}

// FinishMove ends a merchant's open move: switched, the directory points
// at the target; rolled back, at the source as before. Either way the
// merchant is active again.
func (d *Directory) FinishMove(ctx context.Context, shopNo string, switched bool) error {
	outcome := OutcomeRolledBack
	if switched {
		outcome = OutcomeSwitched
	}
	return d.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var to string
		if err := tx.NewRaw(`update cell_moves set finished_at = now(), outcome = ?
			where shop_no = ? and finished_at is null returning to_cell`, outcome, shopNo).Scan(ctx, &to); err != nil {
			return fmt.Errorf("finishing the move of %s: no move open: %w", shopNo, err)
		}
		_, err := tx.NewRaw(`update cell_directory set state = ?, updated_at = now(),
			cell = case when ? then ? else cell end where shop_no = ?`, StateActive, switched, to, shopNo).Exec(ctx)
		return err
	})
}

// OpenMove is the merchant's unfinished move's cells, and false when it
// has none.
func (d *Directory) OpenMove(ctx context.Context, shopNo string) (from, to string, open bool, err error) {
	err = d.db.NewRaw("select from_cell, to_cell from cell_moves where shop_no = ? and finished_at is null", shopNo).
		Scan(ctx, &from, &to)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", false, nil
	}
	return from, to, err == nil, err
}
