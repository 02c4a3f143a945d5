package app

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/cells"
	"github.com/paygate/gateway/ledger/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The forwarder follows an id through each cell's forwarding, hop by
// hop, stops at a paused one, leaves an id nobody forwards in the cell it
// names, and believes what it read for CacheTTL (the test's clock).
func TestForwarder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbs := map[string]bun.IDB{}
	for _, n := range []string{"a1", "b2", "c3"} {
		dbs[n] = pgtest.NewDB(t)
	}
	forward := func(cell, id string, to any) {
		t.Helper()
		if _, err := dbs[cell].NewRaw("insert into cellmove_forwards (id, move_id, to_cell) values (?, 1, ?) on conflict (id) do update set to_cell = excluded.to_cell",
			id, to).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	forward("a1", "crd_a1moved", "b2")
	forward("b2", "crd_a1moved", "c3") // moved on from b2
	forward("a1", "crd_a1paused", nil)
	forward("a1", "auth_a1moved", "b2")
	now := time.Now()
	f := newForwarder(dbs)
	f.now = func() time.Time { return now }
	check := func(cell, id, want string, wantPaused bool) {
		t.Helper()
		if got, paused := f.resolve(ctx, cell, id); got != want || paused != wantPaused {
			t.Errorf("resolve(%s, %s) = %s %v, want %s %v", cell, id, got, paused, want, wantPaused)
		}
	}
	for _, tc := range []struct {
		cell, id, want string
		paused         bool
	}{
		{"a1", "crd_a1moved", "c3", false},
		{"a1", "auth_a1moved", "b2", false},
		{"a1", "crd_a1paused", "a1", true},
		{"a1", "crd_a1stays", "a1", false},
		{"c3", "crd_c3own", "c3", false}, // a cell that forwards nothing
		{"zz", "crd_zzgone", "zz", false},
	} {
		check(tc.cell, tc.id, tc.want, tc.paused)
	}
	// The pause ends (switched) and c3 starts forwarding: within the
	// TTL the router still believes what it read, after it the new.
	forward("a1", "crd_a1paused", "c3")
	forward("c3", "crd_c3own", "b2")
	now = now.Add(cells.CacheTTL - time.Millisecond)
	check("a1", "crd_a1paused", "a1", true)
	check("c3", "crd_c3own", "c3", false)
	now = now.Add(2 * time.Millisecond)
	check("a1", "crd_a1paused", "c3", false)
	check("c3", "crd_c3own", "b2", false)
}
