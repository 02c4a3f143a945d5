package cellmove

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// moverRole is the dedicated role of sql/0035 (cellmove): the only one past the
// journal's guard, for a merchant being moved.
const moverRole = "gateway_mover"

// The states of a move, in order (sql/0035's cellmove_moves).
const (
	StateCopying    = "copying"
	StatePaused     = "paused"
	StateVerified   = "verified"
	StateSwitched   = "switched"
	StateRemoved    = "removed"
	StateRolledBack = "rolled_back"
)

// record is a move's row at the source.
type record struct {
	ID       int64
	Merchant int64
	ShopNo   string
	From, To string
	State    string
	PausedAt sql.NullTime
}

// ErrNoMove is openMove's answer when the merchant has no open move.
var ErrNoMove = errors.New("cellmove: no open move")

// openMove returns the merchant's move that is neither removed nor rolled
// back, if any.
func openMove(ctx context.Context, db bun.IDB, shopNo string) (*record, error) {
	var r record
	err := db.NewRaw(`select id, merchant_id, shop_no, from_cell, to_cell, state, paused_at from cellmove_moves
		where shop_no = ? and state not in ('removed', 'rolled_back')`, shopNo).
		Scan(ctx, &r.ID, &r.Merchant, &r.ShopNo, &r.From, &r.To, &r.State, &r.PausedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNoMove
	}
	if err != nil {
		return nil, fmt.Errorf("cellmove: reading the move: %w", err)
	}
	return &r, nil
}

// startMove records a new move in state copying.
func startMove(ctx context.Context, db bun.IDB, merchant int64, shopNo, from, to string) (*record, error) {
	r := &record{Merchant: merchant, ShopNo: shopNo, From: from, To: to, State: StateCopying}
	err := db.NewRaw(`insert into cellmove_moves (merchant_id, shop_no, from_cell, to_cell, state) values (?, ?, ?, ?, ?) returning id`,
		merchant, shopNo, from, to, StateCopying).Scan(ctx, &r.ID)
	if err != nil {
		return nil, fmt.Errorf("cellmove: recording the move (is another move of this merchant open?): %w", err)
	}
	return r, nil
}

// advance moves the record from one state to the next; it fails when the
// row is not in the state expected (another mover got there first).
func advance(ctx context.Context, db bun.IDB, r *record, to string) error {
	res, err := db.NewRaw(`update cellmove_moves set state = ?,
			paused_at = case when ? = 'paused' then now() else paused_at end,
			finished_at = case when ? in ('removed', 'rolled_back') then now() else finished_at end
		where id = ? and state = ?`, to, to, to, r.ID, r.State).Exec(ctx)
	if err != nil {
		return fmt.Errorf("cellmove: recording %s: %w", to, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("cellmove: move %d is no longer %s", r.ID, r.State)
	}
	r.State = to
	return nil
}

// pauseSince is how long the merchant has been paused, from the record.
func pauseSince(ctx context.Context, db bun.IDB, r *record) (time.Duration, error) {
	var ms float64
	err := db.NewRaw(`select extract(epoch from clock_timestamp() - paused_at) * 1000 from cellmove_moves where id = ?`, r.ID).Scan(ctx, &ms)
	return time.Duration(ms * float64(time.Millisecond)), err
}
