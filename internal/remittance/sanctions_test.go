package remittance_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
)

// Two loads at the same moment each leave a whole list of their own under
// a version of their own: the list read afterwards is exactly one of them.
// The loads are made to overlap by a transaction that holds the table as a
// load does; before loads took that lock, both numbered their version
// (max + 1) while it was held and committed the same version, the two
// lists merged.
func TestConcurrentSanctionsLoadsDoNotMerge(t *testing.T) {
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	if _, err := l.Remit.ReplaceSanctions(ctx, []remittance.SanctionsEntry{{Name: "Old Entry"}}); err != nil {
		t.Fatal(err)
	}
	hold, err := l.Ledger.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback() //nolint:errcheck // committed below; a second rollback is a no-op
	if _, err := hold.ExecContext(ctx, `lock table sanctions_entries in share row exclusive mode`); err != nil {
		t.Fatal(err)
	}
	lists := [][]remittance.SanctionsEntry{
		{{Name: "Alpha One", Country: "DE"}, {Name: "Alpha Two"}},
		{{Name: "Beta One", Country: "FR"}},
	}
	type result struct {
		version int64
		err     error
	}
	results := make(chan result, len(lists))
	for _, list := range lists {
		go func() {
			v, err := l.Remit.ReplaceSanctions(ctx, list)
			results <- result{v, err}
		}()
	}
	// Both loads wait on the held lock before it is released.
	waitForLockWaiters(t, l.Ledger.DB(), 2)
	if err := hold.Commit(); err != nil {
		t.Fatal(err)
	}
	var versions []int64
	for range lists {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		versions = append(versions, r.version)
	}
	if versions[0] == versions[1] {
		t.Fatalf("both loads got version %d", versions[0])
	}
	got, version, err := l.Remit.Sanctions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if version != slices.Max(versions) {
		t.Fatalf("current version %d, loads got %v", version, versions)
	}
	names := func(es []remittance.SanctionsEntry) []string {
		out := make([]string, len(es))
		for i, e := range es {
			out[i] = e.Name
		}
		slices.Sort(out)
		return out
	}
	if g := names(got); !slices.Equal(g, names(lists[0])) && !slices.Equal(g, names(lists[1])) {
		t.Fatalf("list after two loads at once: %v, want exactly one of the loads", g)
	}
}

// waitForLockWaiters waits until n sessions wait for a lock on
// sanctions_entries; a minute is a bound for a lost load, not a timing.
func waitForLockWaiters(t *testing.T, db *bun.DB, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var waiting int
		err := db.NewRaw(`select count(*) from pg_locks where not granted and relation = 'sanctions_entries'::regclass`).
			Scan(context.Background(), &waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting >= n {
			return
		}
	}
	t.Fatalf("fewer than %d loads wait for the sanctions list's lock after a minute", n)
}

// A version names one list only: the load after an empty list (which
// leaves no rows) does not take a number an earlier list had, which a
// worker holding that list would take for no change.
func TestSanctionsVersionsAreNeverReused(t *testing.T) {
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	first, err := l.Remit.ReplaceSanctions(ctx, []remittance.SanctionsEntry{{Name: "First Entry"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Remit.ReplaceSanctions(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if v, err := l.Remit.SanctionsVersion(ctx); err != nil || v != 0 {
		t.Fatalf("after an empty list: version %d, %v; want 0 (none loaded)", v, err)
	}
	next, err := l.Remit.ReplaceSanctions(ctx, []remittance.SanctionsEntry{{Name: "Next Entry"}})
	if err != nil {
		t.Fatal(err)
	}
	if next <= first {
		t.Fatalf("the list after an empty one got version %d, the first list had %d", next, first)
	}
	if v, err := l.Remit.SanctionsVersion(ctx); err != nil || v != next {
		t.Fatalf("current version %d, %v; want %d", v, err, next)
	}
}
