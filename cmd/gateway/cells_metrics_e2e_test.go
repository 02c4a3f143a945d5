package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// scrape is the gateway's /metrics as series (name and labels, as the
// exposition prints them) to values.
func (s *server) scrape() map[string]float64 {
	s.t.Helper()
	resp, err := s.client.Get(s.internalURL("/metrics"))
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		s.t.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		i := strings.LastIndexByte(line, ' ')
		if strings.HasPrefix(line, "#") || i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out
}

// /metrics over two cells: every database, writer, pool and worker figure
// is there once per cell, labelled with it (none is left unlabelled, as
// the home cell's were), and a cell's writer counts that cell's writes
// only: a card made in b2 moves b2's batches, not a1's, and then one made
// in a1 moves a1's.
func TestMetricsOverCells(t *testing.T) {
	t.Parallel()
	g, _, _ := cellsGateway(t)
	g.mustRun("cells", "init")
	ms := map[string]credentials{}
	for _, cell := range []string{"a1", "b2"} {
		var c credentials
		if err := json.Unmarshal([]byte(g.mustRun("merchant", "create", "--name", "Shop "+cell, "--currencies", "USD", "--cell", cell)), &c); err != nil {
			t.Fatal(err)
		}
		g.deposit(c.ShopNo, "USD", "100.00")
		ms[cell] = c
	}
	s := g.serve()
	m := s.scrape()
	for _, cell := range []string{"a1", "b2"} {
		l := `cell="` + cell + `"`
		for _, series := range []string{
			"gateway_ledger_batches_total{" + l + "}",
			"gateway_ledger_commands_total{" + l + "}",
			"go_sql_open_connections{" + l + `,db_name="gateway"}`,
			"gateway_pg_in_recovery{" + l + "}",
			"gateway_callback_backlog{" + l + "}",
			"gateway_hold_backlog{" + l + "}",
			"gateway_db_state_read_errors_total{" + l + "}",
			"gateway_database_writable{" + l + "}",
			"gateway_database_failovers_total{" + l + "}",
			"gateway_worker_running{" + l + `,worker="hold-expiry"}`,
		} {
			if _, ok := m[series]; !ok {
				t.Errorf("/metrics has no %s", series)
			}
		}
	}
	for series := range m {
		name, _, _ := strings.Cut(series, "{")
		if (strings.HasPrefix(name, "gateway_ledger_") || strings.HasPrefix(name, "go_sql_") || strings.HasPrefix(name, "gateway_pg_") ||
			strings.HasPrefix(name, "gateway_worker_") || strings.HasPrefix(name, "gateway_database_")) && !strings.Contains(series, `cell="`) {
			t.Errorf("/metrics has %s without its cell", series)
		}
	}

	batches := func(m map[string]float64, cell string) float64 {
		return m[`gateway_ledger_batches_total{cell="`+cell+`"}`]
	}
	cardIn := func(cell string) {
		t.Helper()
		c := ms[cell]
		if status, v := s.shopCall("POST", "/shop/card/create", c.ShopNo, c.PublicKey, `{"bin":"453201","currency":"USD","amount":"10.00"}`); status != 200 {
			t.Fatalf("card create in %s: %d %v", cell, status, v)
		}
	}
	cardIn("b2")
	after := s.scrape()
	if batches(after, "b2") <= batches(m, "b2") || batches(after, "a1") != batches(m, "a1") {
		t.Errorf("a card made in b2: batches a1 %v → %v, b2 %v → %v; want b2's only to move",
			batches(m, "a1"), batches(after, "a1"), batches(m, "b2"), batches(after, "b2"))
	}
	cardIn("a1")
	if last := s.scrape(); batches(last, "a1") <= batches(after, "a1") {
		t.Errorf("a card made in a1: batches a1 %v → %v; want it to move", batches(after, "a1"), batches(last, "a1"))
	}
	s.mustStop()
}

// Without cells /metrics is what it was before cells: the database,
// writer, pool and worker figures unlabelled but for their own labels, no
// cell anywhere (the contract of docs/operations.md, "Metrics").
func TestMetricsWithoutCellsUnlabelled(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	s := g.serve()
	m := s.scrape()
	for _, series := range []string{"gateway_ledger_batches_total", "gateway_ledger_commands_total", "gateway_ledger_splits_total",
		"gateway_ledger_retries_total", `go_sql_open_connections{db_name="gateway"}`, "gateway_pg_in_recovery", "gateway_callback_backlog",
		"gateway_remittance_backlog", "gateway_hold_backlog", "gateway_db_state_read_errors_total", "gateway_database_writable",
		"gateway_database_failovers_total", `gateway_worker_running{worker="hold-expiry"}`} {
		if _, ok := m[series]; !ok {
			t.Errorf("/metrics has no %s", series)
		}
	}
	for series := range m {
		if strings.Contains(series, "cell=") {
			t.Errorf("/metrics without cells has %s", series)
		}
	}
	s.mustStop()
}
