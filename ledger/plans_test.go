package ledger_test

import (
	"context"
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	// The domains register their prepared statements with the core
	// (ledger.NewStmt): linking them puts every statement of the gateway
	// under TestStatementPlansAreIndexProbes.
	_ "github.com/paygate/gateway/internal/cards"
	_ "github.com/paygate/gateway/internal/delivery"
	_ "github.com/paygate/gateway/internal/fx"
	_ "github.com/paygate/gateway/internal/network"
	_ "github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgtest"
)

// placeholderRe finds the statement parameters ($1, $2, ...).
var placeholderRe = regexp.MustCompile(`\$(\d+)`)

// TestStatementPlansAreIndexProbes prepares every statement of the writer on
// a freshly migrated database, whose tables are empty and never analysed,
// and checks its generic plan: each table is reached by an index, never by
// a scan of the whole table, and no join hashes or sorts one side.
//
// Why: the gateway plans each prepared statement once per connection
// (plan_cache_mode = force_generic_plan, ledger/db.go) and keeps that plan
// for the connection's life. A connection opened on a young database plans
// against nearly empty tables, where a sequential scan looks cheapest; the
// plan then stays while the table grows to millions of rows. Each statement
// is written so that its plan is index probes whatever the statistics say
// (docs/performance.md, "Plans that do not depend on the statistics").
func TestStatementPlansAreIndexProbes(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDB(t)
	ctx := context.Background()
	conn, err := db.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, s := range ledger.Statements() {
		plan := explainGeneric(ctx, t, conn, s)
		if why := planScans(plan); why != "" {
			t.Errorf("%s: %s:\n%s\n%s", s.Name, why, s.SQL, plan)
		}
	}
}

// Every statement of the module is checked: the statements registered in
// this test binary are as many as the calls of NewStmt in the module's
// sources, so a package that makes statements and is not linked above
// fails here.
func TestEveryStatementIsChecked(t *testing.T) {
	calls := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "bin" || d.Name() == "var" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		calls += len(newStmtCallRe.FindAllIndex(src, -1))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(ledger.Statements()); got != calls || calls < 20 {
		t.Errorf("%d statements registered in this test, %d calls of NewStmt in the module: link the missing package above", got, calls)
	}
}

// newStmtCallRe finds a call of NewStmt (its declaration excluded).
var newStmtCallRe = regexp.MustCompile(`(?:ledger\.|[^.\w])NewStmt\(` + "`")

// explainGeneric returns the generic plan of s, with every parameter NULL
// (a generic plan does not depend on the values).
func explainGeneric(ctx context.Context, t *testing.T, conn *sql.Conn, s ledger.Statement) string {
	t.Helper()
	n := 0
	for _, m := range placeholderRe.FindAllStringSubmatch(s.SQL, -1) {
		if k, _ := strconv.Atoi(m[1]); k > n {
			n = k
		}
	}
	// Simple-protocol statements: the text is ours, not input.
	if _, err := conn.ExecContext(ctx, "prepare plan_check as "+s.SQL); err != nil {
		t.Fatalf("%s: prepare: %v\n%s", s.Name, err, s.SQL)
	}
	defer conn.ExecContext(ctx, "deallocate plan_check") //nolint:errcheck
	args := strings.TrimSuffix(strings.Repeat("null, ", n), ", ")
	q := "explain (costs off) execute plan_check"
	if n > 0 {
		q += "(" + args + ")"
	}
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		t.Fatalf("%s: explain: %v", s.Name, err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		b.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// planScans returns why plan (EXPLAIN's text, costs off) may read a whole
// table or index, or "" if every scan is a probe: no sequential scan, no
// hash or merge join (each reads its inner side whole), and every index
// scan with an index condition.
func planScans(plan string) string {
	lines := strings.Split(plan, "\n")
	for i, line := range lines {
		for _, bad := range []string{"Seq Scan", "Hash Join", "Merge Join"} {
			if strings.Contains(line, bad) {
				return "the generic plan has a " + bad
			}
		}
		if !strings.Contains(line, "Index Scan") && !strings.Contains(line, "Index Only Scan") {
			continue
		}
		// The node's details follow it, up to the next node.
		probe := false
		for _, detail := range lines[i+1:] {
			if strings.Contains(detail, "->") {
				break
			}
			if strings.Contains(detail, "Index Cond:") {
				probe = true
			}
		}
		if !probe {
			return "an index scan with no condition reads the whole index: " + strings.TrimSpace(line)
		}
	}
	return ""
}

// planScans must tell a probe from a scan, or the test above passes
// whatever the plans are.
func TestPlanScans(t *testing.T) {
	cases := []struct {
		name, plan string
		scan       bool
	}{
		{"index probes", `Nested Loop
  ->  Function Scan on unnest v
  ->  Index Scan using accounts_address_key on accounts a
        Index Cond: (address = v.address)`, false},
		{"bitmap probe", `Nested Loop
  ->  Function Scan on unnest v
  ->  Bitmap Heap Scan on merchant_limits l
        Recheck Cond: (merchant_id = v.m)
        ->  Bitmap Index Scan on merchant_limits_pkey
              Index Cond: (merchant_id = v.m)`, false},
		{"sequential scan", `Seq Scan on cards
  Filter: (card_no = ANY ($1))`, true},
		{"hash join", `Hash Join
  Hash Cond: (b.account_id = v.id)
  ->  Index Only Scan using balances_pkey on balances b
  ->  Hash
        ->  Function Scan on unnest v`, true},
		{"whole index", `Nested Loop
  ->  Index Scan using balances_pkey on balances b
  ->  Function Scan on unnest v
        Filter: (id = b.account_id)`, true},
	}
	for _, c := range cases {
		if got := planScans(c.plan) != ""; got != c.scan {
			t.Errorf("%s: planScans says scan %v, want %v", c.name, got, c.scan)
		}
	}
}
