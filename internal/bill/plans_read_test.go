package bill_test

import (
	"testing"

	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/ledger/pgtest"
)

// TestReadPlansAreIndexProbes explains every read of the bill on a freshly
// migrated database, whose tables are empty and never analysed, and checks
// that the plan cannot turn quadratic whatever the statistics
// (pgtest.ReadPlanProblems; internal/audit's test says why).
func TestReadPlansAreIndexProbes(t *testing.T) {
	t.Parallel()
	pgtest.CheckReadPlans(t, bill.ReadQueries)
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
