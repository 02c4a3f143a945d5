package audit

import (
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/ledger"
)

// ReadQueries returns every read of audit verify and of the statement
// check (the bill's are the bill's, the settlement reads the network's), as
// PostgreSQL receives it for merchant m (0: every merchant, where the query
// takes one), with sample arguments.
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
		add("verify stream entries", fmt.Sprintf(verifyEntriesSQL, m)),
		add("verify stream postings", fmt.Sprintf(verifyPostingsSQL, m)),
		add("verify stream lines", fmt.Sprintf(verifyLinesSQL, m)),
		add("verify accounts", strings.ReplaceAll(verifyAccountsSQL, "$1", "'{1,2,3}'")),
		add("verify balances", strings.ReplaceAll(verifyBalancesSQL, "$1", "'{1,2,3}'")),
		add("verify billChain", strings.ReplaceAll(billChainCheck.sql, "$1", fmt.Sprint(m))),
		add("verify balance", strings.ReplaceAll(balanceCheck.sql, "$1", fmt.Sprint(m))),
		add("verify account balances", fmt.Sprintf(verifyAccountBalancesSQL, m)),
		add("verify closes", fmt.Sprintf(loadClosesSQL, m)),
		add("close head", closeHeadSQL, merchant, at),
		add("close balances", closeBalancesSQL, merchant, 10, merchant, 10),
		add("verify heads", strings.ReplaceAll(loadHeadsSQL, "$1::bigint", fmt.Sprint(m))),
		add("statement accounts", statementAccountsSQL, merchant, at, at.Add(time.Hour), pgdialect.Array([]string{"funding", "card_available"}), StatementAccountsMax+1),
	}
	if m == 0 {
		// The rate versions are no merchant's: verify reads them whole
		// (a few rows per rate ever set) for one merchant too.
		errs = append(errs, add("verify rate versions", loadRateVersionsSQL))
	}
	for _, c := range verifyChecks {
		// The checks go by the simple protocol: pgx writes the merchant in.
		errs = append(errs, add("verify "+c.name, strings.ReplaceAll(c.sql, "$1", fmt.Sprint(m))))
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
