package bill

import (
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/ledger"
)

// ReportReadQueries returns the balance report's read as PostgreSQL
// receives it for merchant m (always one merchant's), with sample
// arguments: all currencies, and one.
func ReportReadQueries(db *bun.DB, m int64) ([]ledger.Statement, error) {
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var out []ledger.Statement
	for _, cur := range []string{"", "USD"} {
		b, err := db.NewRaw(balanceReportSQL, max(m, 1), at, at.AddDate(0, 1, 0), cur).AppendQuery(db.Formatter(), nil)
		if err != nil {
			return nil, err
		}
		out = append(out, ledger.Statement{Name: "balance report " + cur, SQL: string(b)})
	}
	return out, nil
}
