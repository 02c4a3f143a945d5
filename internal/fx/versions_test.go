package fx_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/ledger"
)

// A new rate is a new version with its time; the pair's rate is its latest
// version, and the versions before it stay as they were: UPDATE, DELETE
// and TRUNCATE of fx_rate_versions are refused like the journal's.
func TestRatesAreVersionedAndAppendOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := &atomic.Pointer[time.Time]{}
	start := time.Now().UTC().Truncate(time.Microsecond)
	now.Store(&start)
	g := gatewaytest.New(t, nil, gatewaytest.Options{Ledger: ledger.Config{Now: func() time.Time { return *now.Load() }}})
	m := gatewaytest.Merchant(t, g, "USD")
	first, err := g.FX.Set(ctx, "USD", "EUR", "0.92", 50)
	if err != nil {
		t.Fatal(err)
	}
	later := start.Add(time.Minute)
	now.Store(&later)
	second, err := g.FX.Set(ctx, "USD", "EUR", "0.93", 40)
	if err != nil {
		t.Fatal(err)
	}
	if second.Version <= first.Version {
		t.Fatalf("versions %d then %d", first.Version, second.Version)
	}
	r, err := current(t, g.Ledger, g.FX, m.ID, "USD", "EUR")
	if err != nil || r.Version != second.Version || r.MidRate != "0.93" || r.SpreadBps != 40 || !r.UpdatedAt.Equal(later) {
		t.Fatalf("current %+v, %v; want version %d at %s", r, err, second.Version, later)
	}
	var n int
	var mid string
	if err := g.DB().QueryRowContext(ctx, `select count(*), min(mid_rate::text) from fx_rate_versions
		where base = 'USD' and quote = 'EUR' and source = 'operator'`).Scan(&n, &mid); err != nil || n != 2 || mid != "0.92" {
		t.Fatalf("history: %d versions, first %s, %v", n, mid, err)
	}
	for _, stmt := range []string{
		`update fx_rate_versions set mid_rate = 1 where version = ?`,
		`delete from fx_rate_versions where version = ?`,
		`truncate fx_rate_versions`,
	} {
		var args []any
		if strings.Contains(stmt, "?") {
			args = append(args, first.Version)
		}
		if _, err := g.DB().ExecContext(ctx, stmt, args...); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%q: %v, want refused as append-only", stmt, err)
		}
	}
	rates, err := g.FX.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rates {
		if r.Base == "USD" && r.Quote == "EUR" && r.Version != second.Version {
			t.Errorf("List gives version %d of USD/EUR, want the latest %d", r.Version, second.Version)
		}
	}
}

// Re-stamping the seeded rates adds versions of the same rates stamped now
// instead of changing the old ones.
func TestRestampAddsSeedVersions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := &atomic.Pointer[time.Time]{}
	start := time.Now().UTC().Add(48 * time.Hour).Truncate(time.Microsecond)
	now.Store(&start)
	g := gatewaytest.New(t, nil, gatewaytest.Options{Ledger: ledger.Config{Now: func() time.Time { return *now.Load() }}})
	var before int
	if err := g.DB().QueryRowContext(ctx, `select count(*) from fx_rate_versions`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	n, err := g.FX.RestampSeedRates(ctx, time.Hour)
	if err != nil || n == 0 {
		t.Fatalf("restamped %d, %v", n, err)
	}
	var after int
	var latest time.Time
	if err := g.DB().QueryRowContext(ctx, `select count(*), max(set_at) from fx_rate_versions`).Scan(&after, &latest); err != nil {
		t.Fatal(err)
	}
	if after != before+int(n) || !latest.Equal(start) {
		t.Fatalf("%d versions before, %d after %d restamped; latest %s, want %s", before, after, n, latest, start)
	}
}
