package pgtest

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/ledger"
)

// The check that a read's plan cannot turn quadratic whatever the
// statistics (TestReadPlansAreIndexProbes in ledger, and the domains' own
// read-plan tests): EXPLAIN on a freshly migrated, never analysed database,
// then ReadPlanProblems.

// ExplainRead returns the plan of q (a complete statement, its arguments
// written in).
func ExplainRead(ctx context.Context, db *bun.DB, q string) (PlanNode, error) {
	var raw []byte
	if err := db.DB.QueryRowContext(ctx, "explain (format json, costs off) "+q).Scan(&raw); err != nil {
		return PlanNode{}, fmt.Errorf("explain: %w", err)
	}
	var plans []struct {
		Plan PlanNode `json:"Plan"`
	}
	if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
		return PlanNode{}, fmt.Errorf("plan %s: %v", raw, err)
	}
	return plans[0].Plan, nil
}

// PlanNode is a node of EXPLAIN (FORMAT JSON).
type PlanNode struct {
	NodeType  string     `json:"Node Type"`
	Parent    string     `json:"Parent Relationship"`
	Relation  string     `json:"Relation Name"`
	Alias     string     `json:"Alias"`
	IndexName string     `json:"Index Name"`
	IndexCond string     `json:"Index Cond"`
	Plans     []PlanNode `json:"Plans"`
}

// outerRefRe finds a column of another relation in an index condition:
// the scanned relation's own columns are not qualified there.
var outerRefRe = regexp.MustCompile(`\b[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*\b`)

// ReadPlanProblems returns why a plan may do more than a bounded amount of
// work per row it reads, or nothing:
//
//   - no Hash Join or Merge Join (each reads one side whole, from the
//     estimates' choice);
//   - the inner side of every Nested Loop, and every correlated SubPlan, is
//     a probe: it reaches its tables only through index conditions naming
//     a column of the outer row, never through a sequential scan, a scan of
//     a whole index, a CTE or a materialised result rescanned per row;
//   - for one merchant (scoped), no table is read whole: every scan has an
//     index condition.
//
// Aggregates, sorts and windows over what the plan read are allowed.
func ReadPlanProblems(n PlanNode, scoped bool) []string {
	var out []string
	var walk func(n PlanNode, probe bool, alias string)
	walk = func(n PlanNode, probe bool, alias string) {
		name := n.NodeType
		if n.Relation != "" {
			name += " on " + n.Relation
		}
		if n.Alias != "" {
			alias = n.Alias
		}
		switch n.NodeType {
		case "Hash Join", "Merge Join":
			out = append(out, "a "+n.NodeType+" (its inner side is read whole)")
		case "Seq Scan", "Tid Range Scan":
			if probe || scoped {
				out = append(out, "a "+name+" reads the table whole")
			}
		case "Index Scan", "Index Only Scan", "Bitmap Index Scan":
			switch {
			case n.IndexCond == "" && (probe || scoped):
				out = append(out, fmt.Sprintf("%s using %s has no index condition: it reads the whole index", name, n.IndexName))
			case probe && !outerRefRe.MatchString(n.IndexCond):
				out = append(out, fmt.Sprintf("%s using %s is rescanned for every outer row: %s names no outer column", name, n.IndexName, n.IndexCond))
			}
		case "Materialize", "CTE Scan", "WorkTable Scan":
			if probe {
				out = append(out, "a "+name+" is rescanned for every outer row")
			}
		}
		for i, c := range n.Plans {
			inner := probe
			if n.NodeType == "Nested Loop" && i == 1 {
				inner = true
			}
			if c.Parent == "SubPlan" {
				inner = true
			}
			walk(c, inner, alias)
		}
	}
	walk(n, false, "")
	return out
}

// CheckReadPlans explains every read that queries lists, for one merchant
// and for every merchant, on a freshly migrated database, and fails the
// test on each plan ReadPlanProblems finds: the read-plan test of every
// package that owns reads (the bill's, audit verify's).
func CheckReadPlans(t *testing.T, queries func(db *bun.DB, m int64) ([]ledger.Statement, error)) {
	t.Helper()
	db := NewDB(t)
	ctx := context.Background()
	for _, m := range []int64{1, 0} {
		qs, err := queries(db, m)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			plan, err := ExplainRead(ctx, db, q.SQL)
			if err != nil {
				t.Fatalf("%s: %v\n%s", q.Name, err, q.SQL)
			}
			for _, why := range ReadPlanProblems(plan, m != 0) {
				t.Errorf("%s (merchant %d): %s\n%s", q.Name, m, why, q.SQL)
			}
		}
	}
}
