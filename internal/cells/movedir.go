package cells

import (
	"context"
	"fmt"
	"time"
)

// MoveDirectory is the directory as a move drives it: internal/cellmove's
// Directory interface (BeginMove, Resume, Switch, each idempotent, since a
// resumed move repeats its last call) on Directory's one-transaction
// writes. `gateway cells move` hands it to the mover when GATEWAY_CELLS is
// set (docs/scaling.md, "Moving a merchant between cells").
type MoveDirectory struct {
	Dir *Directory
	// Settle is how long BeginMove waits once the merchant is moving, so
	// that every router's cache (CacheTTL) has seen it before the mover
	// fences and copies the tail: a router still sending the merchant's
	// requests to the source would otherwise write what the tail misses
	// (a write outside the journal, which the fence does not hold).
	Settle time.Duration
}

// NewMoveDirectory is d for a mover, settling for CacheTTL plus a margin
// for a request already routed and still in flight.
func NewMoveDirectory(d *Directory) *MoveDirectory {
	return &MoveDirectory{Dir: d, Settle: CacheTTL + time.Second}
}

// place is where the directory has the merchant, or an error naming it
// unknown.
func (m *MoveDirectory) place(ctx context.Context, shopNo string) (Entry, error) {
	e, found, err := m.Dir.Lookup(ctx, shopNo)
	if err == nil && !found {
		err = fmt.Errorf("the directory does not know %s", shopNo)
	}
	return e, err
}

// BeginMove marks the merchant moving from from to to (a merchant already
// moving on that very move is left as it is) and waits Settle.
func (m *MoveDirectory) BeginMove(ctx context.Context, shopNo, from, to string) error {
	e, err := m.place(ctx, shopNo)
	if err != nil {
		return err
	}
	switch {
	case e.Cell != from:
		return fmt.Errorf("the directory places %s in cell %s, not %s", shopNo, e.Cell, from)
	case e.State == StateActive:
		if err := m.Dir.BeginMove(ctx, shopNo, to); err != nil {
			return err
		}
	default:
		if err := m.sameMove(ctx, shopNo, from, to); err != nil {
			return err
		}
	}
	t := time.NewTimer(m.Settle)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// sameMove checks that the merchant's open move goes from from to to.
func (m *MoveDirectory) sameMove(ctx context.Context, shopNo, from, to string) error {
	f, t, open, err := m.Dir.OpenMove(ctx, shopNo)
	if err != nil {
		return err
	}
	if !open || f != from || t != to {
		return fmt.Errorf("the directory's open move of %s is not from %s to %s (open %v: %s to %s)", shopNo, from, to, open, f, t)
	}
	return nil
}

// Resume makes the merchant active in from again: its open move rolled
// back. A merchant already active there has nothing to resume.
func (m *MoveDirectory) Resume(ctx context.Context, shopNo, from string) error {
	return m.finish(ctx, shopNo, from, false)
}

// Switch makes the merchant active in to: its open move switched. A
// merchant already active there was switched before.
func (m *MoveDirectory) Switch(ctx context.Context, shopNo, to string) error {
	return m.finish(ctx, shopNo, to, true)
}

func (m *MoveDirectory) finish(ctx context.Context, shopNo, cell string, switched bool) error {
	e, err := m.place(ctx, shopNo)
	if err != nil {
		return err
	}
	if e.State == StateActive {
		if e.Cell != cell {
			return fmt.Errorf("the directory places %s in cell %s, not %s", shopNo, e.Cell, cell)
		}
		return nil
	}
	f, t, open, err := m.Dir.OpenMove(ctx, shopNo)
	if err != nil {
		return err
	}
	if !open || (switched && t != cell) || (!switched && f != cell) {
		return fmt.Errorf("the directory's open move of %s (%s to %s) does not end in cell %s", shopNo, f, t, cell)
	}
	return m.Dir.FinishMove(ctx, shopNo, switched)
}
