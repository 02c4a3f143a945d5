package network_test

import (
	"context"
	"testing"

	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/ledger/pgtest"
)

// The reads of settlement and refund reconciliation plan as probes whatever the
// statistics, like the ledger's reads (TestReadPlansAreIndexProbes there),
// with the strict check of a read scoped to one merchant as well: no table
// is read whole.
func TestSettlementReadPlansAreIndexProbes(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDB(t)
	queries, err := network.ReadQueries(db)
	if err != nil {
		t.Fatal(err)
	}
	if len(queries) != 4 {
		t.Fatalf("queries: %d", len(queries))
	}
	for _, q := range queries {
		plan, err := pgtest.ExplainRead(context.Background(), db, q.SQL)
		if err != nil {
			t.Fatalf("%s: %v\n%s", q.Name, err, q.SQL)
		}
		for _, scoped := range []bool{false, true} {
			for _, why := range pgtest.ReadPlanProblems(plan, scoped) {
				t.Errorf("%s (scoped %v): %s\n%s", q.Name, scoped, why, q.SQL)
			}
		}
	}
}
