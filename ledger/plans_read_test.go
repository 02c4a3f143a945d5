package ledger_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgtest"
)

// TestReadPlansAreIndexProbes explains every read of audit verify, of the
// bill and of reconciliation on a freshly migrated database, whose tables
// are empty and never analysed, for one merchant and for every merchant,
// and checks that the plan cannot turn quadratic whatever the statistics
// (readPlanProblems): no hash or merge join, every join an index probe per
// row, and a merchant's rows read through an index.
//
// Why: these queries are planned at every run (verify goes by the simple
// protocol), from whatever statistics the tables have. With statistics
// from when the journal was small, the bill-lines check of audit verify
// rescanned a merchant's entries for every bill line (a nested loop over a
// materialised scan): seconds for ten thousand entries (issue 17). Written
// as lateral probes kept apart by "offset 0", as the writer's statements
// are (TestStatementPlansAreIndexProbes), the plan does not depend on the
// estimates. Verifying every merchant reads whole tables, once each: that
// is allowed where nothing is joined.
func TestReadPlansAreIndexProbes(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDB(t)
	ctx := context.Background()
	for _, m := range []int64{1, 0} {
		queries, err := ledger.ReadQueries(db, m)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range queries {
			plan, err := pgtest.ExplainRead(ctx, db, q.SQL)
			if err != nil {
				t.Fatalf("%s: %v\n%s", q.Name, err, q.SQL)
			}
			for _, why := range pgtest.ReadPlanProblems(plan, m != 0) {
				t.Errorf("%s (merchant %d): %s\n%s", q.Name, m, why, q.SQL)
			}
		}
	}
}

// readPlanProblems must tell a probe from a rescan, or the test above
// passes whatever the plans are.
func TestReadPlanProblems(t *testing.T) {
	idx := func(rel, cond string) pgtest.PlanNode {
		return pgtest.PlanNode{NodeType: "Index Scan", Relation: rel, Alias: rel[:1], IndexName: rel + "_pkey", IndexCond: cond}
	}
	seq := func(rel string) pgtest.PlanNode {
		return pgtest.PlanNode{NodeType: "Seq Scan", Relation: rel, Alias: rel[:1]}
	}
	loop := func(outer, inner pgtest.PlanNode) pgtest.PlanNode {
		inner.Parent = "Inner"
		outer.Parent = "Outer"
		return pgtest.PlanNode{NodeType: "Nested Loop", Plans: []pgtest.PlanNode{outer, inner}}
	}
	cases := []struct {
		name   string
		plan   pgtest.PlanNode
		scoped bool
		bad    bool
	}{
		{"probe per line", loop(idx("bill_lines", "(merchant_id = 1)"), idx("postings", "((merchant_id = b.merchant_id) AND (merchant_seq = b.merchant_seq))")), true, false},
		{"whole journal, probes", loop(seq("entries"), idx("postings", "(merchant_id = e.merchant_id)")), false, false},
		{"whole journal scanned for one merchant", loop(seq("entries"), idx("postings", "(merchant_id = e.merchant_id)")), true, true},
		{"rescan of the merchant's entries per line", loop(idx("bill_lines", "(merchant_id = 1)"),
			pgtest.PlanNode{NodeType: "Materialize", Plans: []pgtest.PlanNode{idx("entries", "(merchant_id = 1)")}}), true, true},
		{"index rescanned per row", loop(idx("bill_lines", "(merchant_id = 1)"), idx("entries", "(merchant_id = 1)")), true, true},
		{"sequential scan per row", loop(seq("bill_lines"), seq("postings")), false, true},
		{"hash join", pgtest.PlanNode{NodeType: "Hash Join", Plans: []pgtest.PlanNode{seq("postings"), {NodeType: "Hash", Plans: []pgtest.PlanNode{seq("entries")}}}}, false, true},
		{"correlated subplan scanning", pgtest.PlanNode{NodeType: "Seq Scan", Relation: "entries", Alias: "e",
			Plans: []pgtest.PlanNode{{NodeType: "Aggregate", Parent: "SubPlan", Plans: []pgtest.PlanNode{seq("postings")}}}}, false, true},
		{"aggregate over a scan", pgtest.PlanNode{NodeType: "Aggregate", Plans: []pgtest.PlanNode{seq("postings")}}, false, false},
	}
	for _, c := range cases {
		if got := len(pgtest.ReadPlanProblems(c.plan, c.scoped)) > 0; got != c.bad {
			t.Errorf("%s: problems %v, want %v", c.name, pgtest.ReadPlanProblems(c.plan, c.scoped), c.bad)
		}
	}
}

// Every query the test explains exists: a renamed one would not be checked.
func TestReadQueriesAreListed(t *testing.T) {
	db := pgtest.NewDB(t)
	qs, err := ledger.ReadQueries(db, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, q := range qs {
		names[q.Name] = true
	}
	for _, c := range ledger.VerifyCheckNames() {
		if !names["verify "+c] {
			t.Errorf("verify check %s is not explained", c)
		}
	}
	for _, n := range []string{"verify stream entries", "verify stream postings", "verify stream lines", "verify accounts", "bill lines", "statement accounts"} {
		if !names[n] {
			t.Errorf("%s is not explained", n)
		}
	}
	// Reconciliation's reads left with the network domain (internal/network
	// lists and checks them); the core keeps 13.
	if len(qs) < 13 {
		t.Errorf("queries: %v", names)
	}
}

// TestVerifyCursorsReadIndexesInOrder: the stream of audit verify merges
// three cursors (entries, postings, bill lines) by key in Go, so each must
// read its table through the index that gives that order, with no Sort:
// sorting a whole journal holds back the first row until the last is read
// and spills to disk. Planned under verify's settings (sorting off while
// the cursors are declared), that is the plan whatever the statistics: on
// the never-analysed empty database, and after ANALYZE of a journal of a
// few rows, where without the setting the planner sorts.
func TestVerifyCursorsReadIndexesInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	db := l.DB()
	explain := func(q ledger.VerifyCursor, settings string) pgtest.PlanNode {
		t.Helper()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback() //nolint:errcheck
		if settings != "" {
			if _, err := tx.ExecContext(ctx, settings); err != nil {
				t.Fatal(err)
			}
		}
		var raw []byte
		if err := tx.QueryRowContext(ctx, "explain (format json, costs off) declare c no scroll cursor for "+q.SQL).Scan(&raw); err != nil {
			t.Fatalf("%s: explain: %v", q.Name, err)
		}
		var plans []struct {
			Plan pgtest.PlanNode `json:"Plan"`
		}
		if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
			t.Fatalf("%s: plan %s: %v", q.Name, raw, err)
		}
		return plans[0].Plan
	}
	inOrder := func(p pgtest.PlanNode, index string) bool {
		return (p.NodeType == "Index Scan" || p.NodeType == "Index Only Scan") && p.IndexName == index && len(p.Plans) == 0
	}
	check := func(state string) {
		for _, m := range []int64{1, 0} {
			for _, q := range ledger.VerifyCursors(m) {
				if p := explain(q, ledger.VerifyCursorSettings); !inOrder(p, q.Index) {
					t.Errorf("%s, merchant %d, %s: plan %+v, want a scan of %s alone", state, m, q.Name, p, q.Index)
				}
			}
		}
	}
	check("never analysed")

	// A journal of a few rows, analysed: the statistics of a young
	// database, or of one that autovacuum analysed while it was small.
	m := newMerchant(t, l, "USD")
	deposit(t, l, m.ID, "USD", 1_00)
	deposit(t, l, m.ID, "USD", 2_00)
	if _, err := db.ExecContext(ctx, "analyze entries; analyze postings; analyze bill_lines"); err != nil {
		t.Fatal(err)
	}
	check("analysed while small")
	// The setting is what holds the plan there: without it, the whole
	// journal of every merchant is sorted (the test would pass whatever
	// the stream's text otherwise).
	sorted := 0
	for _, q := range ledger.VerifyCursors(0) {
		if !inOrder(explain(q, ""), q.Index) {
			sorted++
		}
	}
	if sorted == 0 {
		t.Error("without the settings, every cursor reads its index in order too: the test shows nothing")
	}
}
