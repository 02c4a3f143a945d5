package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/gatewaytest"
)

// sqlIn runs statements in the database at url: the tests' hand on one
// cell, as an operator's mistake or an attacker's would be.
func sqlIn(t *testing.T, url string, query string, args ...any) {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// queryIn is one value read in the database at url.
func queryIn(t *testing.T, url string, query string, args ...any) string {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v sql.NullString
	if err := db.QueryRowContext(context.Background(), query, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v.String
}

// verifyBreaks runs audit verify over the cells: "" when it passes, else
// its report (exit 1; any other failure stops the test).
func verifyBreaks(t *testing.T, g *gateway, args ...string) string {
	t.Helper()
	r := g.run(append([]string{"audit", "verify"}, args...)...)
	switch r.code() {
	case 0:
		return ""
	case 1:
		return r.stdout
	}
	t.Fatalf("audit verify: exit %d: %v\n%s\n%s", r.code(), r.err, r.stdout, r.stderr)
	return ""
}

// Over two cells: the operator's data loaded once reaches both, and audit
// verify over the cells passes; then each break one cell can hide from
// its own verify is named with its cell — a rate changed in one cell, a
// merchant's row copied into the other, a tombstone whose hash is not the
// moved chain's — and each goes away when it is undone.
func TestAuditVerifyOverCells(t *testing.T) {
	t.Parallel()
	g, dbA, dbB := cellsGateway(t)
	g.mustRun("cells", "init")
	var mA, mB credentials
	for _, m := range []struct {
		c    *credentials
		cell string
	}{{&mA, "a1"}, {&mB, "b2"}} {
		if err := json.Unmarshal([]byte(g.mustRun("merchant", "create", "--name", "Shop "+m.cell, "--currencies", "USD", "--cell", m.cell)), m.c); err != nil {
			t.Fatal(err)
		}
		g.deposit(m.c.ShopNo, "USD", "10.00")
	}

	// Operator data, one command each, into both cells.
	var fx struct{ Cells map[string]json.RawMessage }
	if err := json.Unmarshal([]byte(g.mustRun("fx", "set", "--pair", "USD/EUR", "--rate", "0.9312")), &fx); err != nil || len(fx.Cells) != 2 {
		t.Fatalf("fx set over cells: %+v %v", fx, err)
	}
	g.mustRun("bin", "add", "--bin", "45320177", "--currency", "USD", "--network", "VISA")
	list := filepath.Join(t.TempDir(), "sanctions.csv")
	if err := os.WriteFile(list, []byte("name,country\nIvan Example,RU\nJane Listed,IR\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g.mustRun("sanctions", "load", "--file", list)
	for _, url := range []string{dbA, dbB} {
		for q, want := range map[string]string{
			"select trim_scale(mid_rate)::text from fx_rates where base = 'USD' and quote = 'EUR'":                      "0.9312",
			"select network from bins where bin = '45320177'":                                                           "VISA",
			"select count(*)::text from sanctions_entries where version = (select max(version) from sanctions_entries)": "2",
		} {
			if got := queryIn(t, url, q); got != want {
				t.Errorf("%s in %s: %q, want %q", q, url, got, want)
			}
		}
	}
	if out := verifyBreaks(t, g); out != "" {
		t.Fatalf("audit verify over the cells as made:\n%s", out)
	}
	var rep struct {
		OK     bool
		Cells  []struct{ Cell string }
		Totals struct {
			Cells, DirectoryMerchants int
			Merchants, Entries        int64
		}
		OperatorData []struct{ Cell, Table, Digest string }
	}
	if err := json.Unmarshal([]byte(g.mustRun("audit", "verify", "--json")), &rep); err != nil ||
		!rep.OK || len(rep.Cells) != 2 || rep.Totals.DirectoryMerchants != 2 || rep.Totals.Merchants != 2 || rep.Totals.Entries != 2 ||
		len(rep.OperatorData) != 6 {
		t.Errorf("audit verify --json over the cells: %+v %v", rep, err)
	}

	for _, tc := range []struct {
		name         string
		breakIt      func()
		want         []string
		mendIt       func()
		rerunCommand []string
	}{
		{
			name: "a rate changed in one cell",
			breakIt: func() {
				sqlIn(t, dbB, `insert into fx_rate_versions (base, quote, mid_rate, spread_bps, source, set_at)
					values ('USD', 'EUR', 0.95, 50, 'operator', now())`)
			},
			want:         []string{"BREAK operator_data table=fx_rates", "USD/EUR (a1 0.9312 50bps operator, b2 0.95 50bps operator)"},
			rerunCommand: []string{"fx", "set", "--pair", "USD/EUR", "--rate", "0.9312"}, // the same command again levels the cells
		},
		{
			name: "a merchant's row copied into the other cell",
			breakIt: func() {
				row := queryIn(t, dbA, "select row_to_json(m)::text from merchants m where shop_no = $1", mA.ShopNo)
				sqlIn(t, dbB, "insert into merchants overriding system value select * from json_populate_record(null::merchants, $1::json)", row)
			},
			want: []string{"BREAK duplicate cell=b2 shop=" + mA.ShopNo, "is in cell b2 and in cell a1",
				"BREAK identity cell=b2 shop=" + mA.ShopNo, "not in cell 2's range [2000000000000, 3000000000000) and no move brought it here"},
			mendIt: func() {
				sqlIn(t, dbB, "delete from webhook_endpoints where merchant_id = (select id from merchants where shop_no = $1)", mA.ShopNo)
				sqlIn(t, dbB, "delete from merchants where shop_no = $1", mA.ShopNo)
			},
		},
		{
			name: "a tombstone whose hash is not the moved chain's",
			breakIt: func() {
				// b2 says mA left it for a1 at its first entry, with a hash
				// that is not the hash of mA's first entry in a1.
				sqlIn(t, dbB, `insert into cellmove_tombstones (move_id, shop_no, merchant_id, last_seq, last_hash, to_cell, moved_at, removed_at)
					select 1, $1, $2::bigint, 1, sha256('not the chain'), 'a1', now(), now()`, mA.ShopNo, queryIn(t, dbA, "select id::text from merchants where shop_no = $1", mA.ShopNo))
			},
			want: []string{"BREAK tombstone cell=b2 shop=" + mA.ShopNo, "entry 1 has hash", "in cell a1 it has"},
			mendIt: func() {
				// The tombstone made right: it names the chain's own hash.
				hash := queryIn(t, dbA, "select encode(e.hash, 'hex') from entries e join merchants m on m.id = e.merchant_id where m.shop_no = $1 and merchant_seq = 1", mA.ShopNo)
				sqlIn(t, dbB, "update cellmove_tombstones set last_hash = decode($1, 'hex') where shop_no = $2", hash, mA.ShopNo)
			},
		},
	} {
		tc.breakIt()
		out := verifyBreaks(t, g)
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: audit verify does not name %q:\n%s", tc.name, w, out)
			}
		}
		if tc.mendIt != nil {
			tc.mendIt()
		} else {
			g.mustRun(tc.rerunCommand...)
		}
		if out := verifyBreaks(t, g); out != "" {
			t.Errorf("%s, undone: audit verify still fails:\n%s", tc.name, out)
		}
	}

	// b2 unreachable: the rate reaches a1 only, the command says so and
	// exits 1; verify names the difference; the same command again, b2
	// back, levels them.
	cellsEnv := g.env["GATEWAY_CELLS"]
	gone, err := url.Parse(dbB)
	if err != nil {
		t.Fatal(err)
	}
	gone.Path += "_gone" // a database that does not exist
	g.env["GATEWAY_CELLS"] = "a1=" + dbA + ",b2=" + gone.String()
	g.mustFail("written in cells a1; NOT in b2", "fx", "set", "--pair", "USD/EUR", "--rate", "0.94")
	g.env["GATEWAY_CELLS"] = cellsEnv
	if out := verifyBreaks(t, g); !strings.Contains(out, "USD/EUR (a1 0.94 50bps operator, b2 0.9312 50bps operator)") {
		t.Errorf("a rate written in a1 only:\n%s", out)
	}
	g.mustRun("fx", "set", "--pair", "USD/EUR", "--rate", "0.94")
	if out := verifyBreaks(t, g); out != "" {
		t.Errorf("the rate set again in every cell:\n%s", out)
	}
}

// The checkpoint over cells: each cell's own checkpoint and one signed
// root over them, one file; verify against it passes, and a tail rolled
// back in one cell is a named failure of that cell.
func TestCheckpointOverCells(t *testing.T) {
	t.Parallel()
	g, _, dbB := cellsGateway(t)
	g.mustRun("cells", "init")
	for _, cell := range []string{"a1", "b2"} {
		var c credentials
		if err := json.Unmarshal([]byte(g.mustRun("merchant", "create", "--name", "Shop "+cell, "--currencies", "USD", "--cell", cell)), &c); err != nil {
			t.Fatal(err)
		}
		g.deposit(c.ShopNo, "USD", "10.00")
		g.deposit(c.ShopNo, "USD", "20.00")
	}
	dir := t.TempDir()
	key := filepath.Join(dir, "checkpoint.key")
	g.mustRun("audit", "checkpoint-key", "--out", key)
	g.env["GATEWAY_CHECKPOINT_KEY_FILE"] = key
	file := filepath.Join(dir, "cells-cp.json")
	var sum struct {
		Cells int
		Root  string
	}
	if err := json.Unmarshal([]byte(g.mustRun("audit", "checkpoint", "--out", file)), &sum); err != nil || sum.Cells != 2 || len(sum.Root) != 64 {
		t.Fatalf("audit checkpoint over cells: %+v %v", sum, err)
	}
	delete(g.env, "GATEWAY_CHECKPOINT_KEY_FILE") // the auditor has the public key only
	if out := verifyBreaks(t, g, "--checkpoint", file, "--public-key", key+".pub"); out != "" {
		t.Fatalf("verify against the checkpoint over cells:\n%s", out)
	}

	// The file's root over the cells is what it signs: a cell's part
	// changed is named.
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	raw["treeSize"] = 1
	forged := filepath.Join(dir, "forged.json")
	fb, _ := json.Marshal(raw)
	if err := os.WriteFile(forged, fb, 0o600); err != nil {
		t.Fatal(err)
	}
	if out := verifyBreaks(t, g, "--checkpoint", forged, "--public-key", key+".pub"); !strings.Contains(out, "BREAK checkpoint") {
		t.Errorf("a changed file verifies:\n%s", out)
	}

	// b2's last entry removed and its head rewound.
	db, err := database.OpenDB(context.Background(), dbB, database.DBOptions{ConnsMax: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	l := gatewaytest.New(t, db, gatewaytest.Options{})
	rollBackSecondEntry(t, l)
	out := verifyBreaks(t, g, "--checkpoint", file, "--public-key", key+".pub")
	if !strings.Contains(out, "BREAK cell=b2 checkpoint_rollback") || strings.Contains(out, "BREAK cell=a1") {
		t.Errorf("a rolled-back tail in b2:\n%s", out)
	}
}
