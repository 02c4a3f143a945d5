package main

// `gateway serve` with DATABASE_READ_URL on a primary and a synchronous
// standby (internal/pgha): the bill is read from the standby, a deposit is
// in the bill read right after it, and with the standby's replay paused the
// bill still shows it, read from the primary after the wait
// (docs/ha.md, "Reads from the standby").

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/pgha/pghatest"
)

func TestServeReadsTheBillFromTheStandby(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p := pghatest.StartPair(t)
	if err := p.CreateDatabase(ctx, "gateway"); err != nil {
		t.Fatal(err)
	}
	g := &gateway{t: t, env: map[string]string{
		"DATABASE_URL":             p.URL("gateway"),
		"DATABASE_ALLOW_SUPERUSER": "1",
		"DATABASE_READ_URL":        p.Standby().URL("gateway"),
		"DATABASE_READ_WAIT_MS":    "100",
		"GATEWAY_DATA_DIR":         t.TempDir(),
		"GATEWAY_ADDR":             "127.0.0.1:0",
		"GATEWAY_INTERNAL_ADDR":    "127.0.0.1:0",
		"GATEWAY_CONSOLE_ADDR":     "127.0.0.1:0", // not 8445: make run may hold it (internal/archtest)
		"GATEWAY_LOG_LEVEL":        "error",
	}}
	c := g.createMerchant("Read Shop", "USD")
	s := g.serve("--plain-http")
	shop := &haShop{s: s, c: c, client: &http.Client{Timeout: haRequestTimeout, Transport: &http.Transport{}}}
	t.Cleanup(shop.client.CloseIdleConnections)
	standby, err := sql.Open("pgx", p.Standby().URL("gateway"))
	if err != nil {
		t.Fatal(err)
	}
	defer standby.Close()

	// From the day the deposits began to the day of each read: the
	// gateway's clock is the wall clock, and the test may run over UTC
	// midnight.
	firstDay := time.Now().UTC().Format(time.DateOnly)
	billTotal := func() int {
		t.Helper()
		today := time.Now().UTC().Format(time.DateOnly)
		a, err := shop.do(http.MethodGet, "/shop/bill/list?startDate="+firstDay+"&endDate="+today+"&page=1&size=100", "", nil)
		if err != nil || !a.ok() {
			t.Fatalf("GET /shop/bill/list: %v %s", err, a.raw)
		}
		var env struct {
			Data struct {
				Total int               `json:"total"`
				List  []json.RawMessage `json:"list"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(a.raw), &env); err != nil {
			t.Fatalf("bill: %v: %s", err, a.raw)
		}
		if len(env.Data.List) != env.Data.Total {
			t.Fatalf("bill page 1 lists %d of %d lines", len(env.Data.List), env.Data.Total)
		}
		return env.Data.Total
	}
	// How often the standby has read bill_lines by index: the bill's
	// reads on the standby show here (its own statistics).
	standbyBillScans := func() int64 {
		t.Helper()
		var n int64
		if _, err := standby.ExecContext(ctx, "select pg_stat_clear_snapshot()"); err != nil {
			t.Fatal(err)
		}
		if err := standby.QueryRowContext(ctx, "select coalesce(idx_scan, 0) from pg_stat_user_tables where relname = 'bill_lines'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	before := standbyBillScans()
	for i := 1; i <= 3; i++ {
		g.deposit(c.ShopNo, "USD", "10.00")
		if got := billTotal(); got != i {
			t.Fatalf("after deposit %d the bill has %d lines", i, got)
		}
	}
	// The standby's statistics are flushed by its backends within a second
	// or so: wait for them, however long that takes under load.
	deadline := time.Now().Add(time.Minute)
	for standbyBillScans() <= before {
		if time.Now().After(deadline) {
			t.Fatal("the standby never read bill_lines: the bill was not read there")
		}
		time.Sleep(100 * time.Millisecond)
	}

	// The standby stops replaying: an acknowledged deposit is flushed there
	// but not visible; the bill read after it still shows it (the primary
	// answers once the 100 ms wait is over).
	// /metrics counts them (gateway_read_route_reads_total).
	if n := readRouteCount(t, shop, "standby", "none"); n < 1 {
		t.Fatalf("/metrics: %v reads served by the standby after the bill was read there", n)
	}

	if _, err := standby.ExecContext(ctx, "select pg_wal_replay_pause()"); err != nil {
		t.Fatal(err)
	}
	g.deposit(c.ShopNo, "USD", "10.00")
	if got := billTotal(); got != 4 {
		t.Fatalf("with the standby's replay paused, the bill after deposit 4 has %d lines", got)
	}
	// (Lagged reads may also have happened before, on a busy machine.)
	if n := readRouteCount(t, shop, "primary", "lagged"); n < 1 {
		t.Fatalf("/metrics: %v reads sent to the primary as lagged while replay was paused", n)
	}
	if _, err := standby.ExecContext(ctx, "select pg_wal_replay_resume()"); err != nil {
		t.Fatal(err)
	}
	if got := billTotal(); got != 4 {
		t.Fatalf("after replay resumed the bill has %d lines, want 4", got)
	}
	s.mustStop()
}

// readRouteCount reads gateway_read_route_reads_total{server, reason} from
// the gateway's /metrics (-1 when the series is missing).
func readRouteCount(t *testing.T, shop *haShop, server, reason string) float64 {
	t.Helper()
	resp, err := shop.client.Get(shop.s.internalURL("/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	series := fmt.Sprintf("gateway_read_route_reads_total{reason=%q,server=%q} ", reason, server)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, series); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return n
		}
	}
	return -1
}
