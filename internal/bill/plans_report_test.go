package bill_test

import (
	"testing"

	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/ledger/pgtest"
)

// The balance report's statement is index ranges of one merchant, whatever
// the statistics (TestReadPlansAreIndexProbes says how this is checked).
func TestReportReadPlansAreIndexProbes(t *testing.T) {
	t.Parallel()
	pgtest.CheckReadPlans(t, bill.ReportReadQueries)
}
