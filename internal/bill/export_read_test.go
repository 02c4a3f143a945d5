package bill

import (
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/ledger"
)

// ReadQueries returns every read of the bill (audit verify's and the
// statement's are internal/audit's, the settlement reads the network's), as
// PostgreSQL receives it for merchant m, with sample arguments.
func ReadQueries(db *bun.DB, m int64) ([]ledger.Statement, error) {
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	format := func(q string, args ...any) (string, error) {
		b, err := db.NewRaw(q, args...).AppendQuery(db.Formatter(), nil)
		return string(b), err
	}
	merchant := max(m, 1) // the bill and statements are always one merchant's
	var out []ledger.Statement
	add := func(name, q string, args ...any) error {
		s, err := format(q, args...)
		out = append(out, ledger.Statement{Name: name, SQL: s})
		return err
	}
	errs := []error{
		add("bill range", billRangeSQL, merchant, at, merchant, at.Add(time.Hour)),
		add("bill lines", billLinesSQL, merchant, 10_000, 10_049),
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	// The filtered bill's reads are bill reads too (always one merchant's).
	filtered, err := FilteredBillQueries(db, merchant)
	if err != nil {
		return nil, err
	}
	for _, q := range filtered {
		out = append(out, q.Statement)
	}
	return out, nil
}
