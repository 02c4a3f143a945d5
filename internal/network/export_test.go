package network

import (
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/ledger"
)

// ReadQueries returns the reads of settlement and refund reconciliation as PostgreSQL
// receives them, with sample arguments.
func ReadQueries(db *bun.DB) ([]ledger.Statement, error) {
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var out []ledger.Statement
	for _, q := range []struct {
		name, sql string
		args      []any
	}{
		{"settlements by auth", settlementsByAuthSQL, []any{pgdialect.Array([]string{"auth_a", "auth_b"})}},
		{"settlements between", settlementsBetweenSQL, []any{at, at.Add(time.Hour), at, 0, SettlementBatchMax}},
		{"refunds by message", refundsByMessageSQL, []any{pgdialect.Array([]string{"msg_a", "msg_b"})}},
		{"refunds between", refundsBetweenSQL, []any{at, at.Add(time.Hour), at, 0, SettlementBatchMax}},
	} {
		b, err := db.NewRaw(q.sql, q.args...).AppendQuery(db.Formatter(), nil)
		if err != nil {
			return nil, err
		}
		out = append(out, ledger.Statement{Name: q.name, SQL: string(b)})
	}
	return out, nil
}
