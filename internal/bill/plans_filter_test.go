package bill_test

import (
	"context"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/ledger/pgtest"
)

// TestFilteredBillPlansReadTheirIndex explains the reads of the filtered
// bill on a freshly migrated database (empty, never analysed, so the plans
// do not lean on statistics): each reads through the index that makes
// page N cost what page 1 costs (internal/bill/filter.go) — bill_blocks for
// whole blocks, a primary-key range for a block's lines, the card index for
// one card — in bill_seq order with no sort and nothing read whole.
func TestFilteredBillPlansReadTheirIndex(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDB(t)
	ctx := context.Background()
	queries, err := bill.FilteredBillQueries(db, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queries {
		plan, err := pgtest.ExplainRead(ctx, db, q.SQL)
		if err != nil {
			t.Fatalf("%s: %v\n%s", q.Name, err, q.SQL)
		}
		for _, why := range pgtest.ReadPlanProblems(plan, true) {
			t.Errorf("%s: %s\n%s", q.Name, why, q.SQL)
		}
		var indexes []string
		sorted := false
		var walk func(n pgtest.PlanNode)
		walk = func(n pgtest.PlanNode) {
			if n.IndexName != "" {
				indexes = append(indexes, n.IndexName)
			}
			// The block counts are few rows, grouped; a sort of bill lines
			// would mean the order came from elsewhere than the index.
			if n.NodeType == "Sort" && !strings.HasPrefix(q.Name, "bill block") {
				sorted = true
			}
			for _, c := range n.Plans {
				walk(c)
			}
		}
		walk(plan)
		if len(indexes) == 0 || indexes[0] != q.Index {
			t.Errorf("%s reads through %v, want %s first\n%s", q.Name, indexes, q.Index, q.SQL)
		}
		if sorted {
			t.Errorf("%s sorts its rows instead of reading them in order\n%s", q.Name, q.SQL)
		}
	}
}
