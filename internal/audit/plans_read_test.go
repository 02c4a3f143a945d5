package audit_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/gatewaytest"
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
	pgtest.CheckReadPlans(t, audit.ReadQueries)
}

// Every query the test explains exists: a renamed one would not be checked.
func TestReadQueriesAreListed(t *testing.T) {
	db := pgtest.NewDB(t)
	qs, err := audit.ReadQueries(db, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, q := range qs {
		names[q.Name] = true
	}
	for _, c := range audit.VerifyCheckNames() {
		if !names["verify "+c] {
			t.Errorf("verify check %s is not explained", c)
		}
	}
	for _, n := range []string{"verify stream entries", "verify stream postings", "verify stream lines", "verify accounts", "statement accounts"} {
		if !names[n] {
			t.Errorf("%s is not explained", n)
		}
	}
	// Reconciliation's reads left with the network domain (internal/network
	// lists and checks them), the bill's with the bill.
	if len(qs) < 10 {
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
	l := gatewaytest.New(t, nil, gatewaytest.Options{}).Ledger
	db := l.DB()
	explain := func(q audit.VerifyCursor, settings string) pgtest.PlanNode {
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
			for _, q := range audit.VerifyCursors(m) {
				if p := explain(q, audit.VerifyCursorSettings); !inOrder(p, q.Index) {
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
	for _, q := range audit.VerifyCursors(0) {
		if !inOrder(explain(q, ""), q.Index) {
			sorted++
		}
	}
	if sorted == 0 {
		t.Error("without the settings, every cursor reads its index in order too: the test shows nothing")
	}
}
