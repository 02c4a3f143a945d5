package cells_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/cells"
)

// The mover's directory: each call repeated changes nothing (a resumed
// move repeats its last), a call that contradicts the directory fails,
// BeginMove waits Settle, and a switch or a roll-back ends the move
// recorded in cell_moves.
func TestMoveDirectory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, d := cells.PlacedDirectoryForTest(t, "a1", "b2", "c3")
	const shop = cells.TestShopNo
	if cells.NewMoveDirectory(d).Settle <= cells.CacheTTL {
		t.Errorf("the default settle does not outlast the routers' cache")
	}
	md := &cells.MoveDirectory{Dir: d, Settle: 50 * time.Millisecond}
	type step struct {
		call, from, to string
		errHas         string
		wantCell       string
		wantState      string
	}
	run := func(s step) error {
		switch s.call {
		case "begin":
			return md.BeginMove(ctx, shop, s.from, s.to)
		case "resume":
			return md.Resume(ctx, shop, s.from)
		default:
			return md.Switch(ctx, shop, s.to)
		}
	}
	for i, s := range []step{
		{"begin", "b2", "c3", "not b2", "a1", cells.StateActive},
		{"switch", "", "b2", "not b2", "a1", cells.StateActive},
		{"resume", "a1", "", "", "a1", cells.StateActive}, // nothing open: already there
		{"begin", "a1", "b2", "", "a1", cells.StateMoving},
		{"begin", "a1", "b2", "", "a1", cells.StateMoving}, // resumed: the same move
		{"begin", "a1", "c3", "not from a1 to c3", "a1", cells.StateMoving},
		{"switch", "", "c3", "does not end in cell c3", "a1", cells.StateMoving},
		{"resume", "a1", "", "", "a1", cells.StateActive},
		{"begin", "a1", "b2", "", "a1", cells.StateMoving},
		{"switch", "", "b2", "", "b2", cells.StateActive},
		{"switch", "", "b2", "", "b2", cells.StateActive}, // repeated after a crash
		{"resume", "a1", "", "not a1", "b2", cells.StateActive},
	} {
		t0 := time.Now()
		err := run(s)
		if (s.errHas == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), s.errHas)) {
			t.Fatalf("step %d %+v: %v", i, s, err)
		}
		if s.call == "begin" && err == nil && time.Since(t0) < md.Settle {
			t.Errorf("step %d: BeginMove returned before Settle", i)
		}
		if e, _, err := d.Lookup(ctx, shop); err != nil || e.Cell != s.wantCell || e.State != s.wantState {
			t.Fatalf("after step %d %+v: %+v %v", i, s, e, err)
		}
	}
}
