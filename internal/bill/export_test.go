package bill

import (
	"strings"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// FilteredBillQuery is a read of the filtered bill with the index it must
// read through.
type FilteredBillQuery struct {
	ledger.Statement
	Index string
}

// FilteredBillQueries returns the reads of the filtered bill (filter.go)
// as PostgreSQL receives them for merchant m, with sample arguments: a kind
// and currency filter, and a card filter.
func FilteredBillQueries(db *bun.DB, m int64) ([]FilteredBillQuery, error) {
	kinds := Filter{Kinds: []postings.Kind{postings.KindCardAuth, postings.KindCardSettle}, Currency: "USD"}
	card := Filter{Kinds: []postings.Kind{postings.KindCardAuth}, CardNo: "crd_plan"}
	var out []FilteredBillQuery
	add := func(name, index, q string, args ...any) error {
		b, err := db.NewRaw(q, args...).AppendQuery(db.Formatter(), nil)
		out = append(out, FilteredBillQuery{ledger.Statement{Name: name, SQL: string(b)}, index})
		return err
	}
	kw, ka := kinds.where()
	cw, ca := card.where()
	errs := []error{
		add("bill filtered count", "bill_lines_pkey", countLinesSQL+kw, append([]any{m, 1, 1024}, ka...)...),
		add("bill filtered card count", "bill_lines_card_idx", countLinesSQL+cw, append([]any{m, 1, 1_000_000}, ca...)...),
		add("bill block counts", "bill_blocks_pkey", strings.Replace(blockCountsSQL, "%s", kw, 1), append([]any{m, 1, 1000}, ka...)...),
		add("bill filtered lines", "bill_lines_pkey", strings.Replace(filteredLinesSQL, "%s", kw, 1), append(append([]any{m, 50_000, 1_000_000}, ka...), 700, 50)...),
		add("bill filtered card lines", "bill_lines_card_idx", strings.Replace(filteredLinesSQL, "%s", cw, 1), append(append([]any{m, 1, 1_000_000}, ca...), 5_000, 50)...),
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
