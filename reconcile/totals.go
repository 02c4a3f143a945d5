package reconcile

import (
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strconv"

	"github.com/paygate/gateway/postings"
)

// currencyTotals are a reconciliation's totals per currency, file against
// ledger, summed exactly (big integers of minor units): every report
// starts with them.
type currencyTotals struct {
	Totals []SettlementTotal `json:"totals"`
	totals map[string]*settlementSum
}

func newCurrencyTotals() currencyTotals {
	return currencyTotals{Totals: []SettlementTotal{}, totals: map[string]*settlementSum{}}
}

// settlementSum accumulates one currency's totals exactly.
type settlementSum struct {
	cur                             postings.Currency
	fileRows, ledgerRows, matchRows int64
	file, ledger, matched           big.Int
}

func (r *currencyTotals) sum(m postings.Money) *settlementSum {
	s := r.totals[m.Currency.Code]
	if s == nil {
		s = &settlementSum{cur: m.Currency}
		r.totals[m.Currency.Code] = s
		r.Totals = append(r.Totals, SettlementTotal{Currency: m.Currency.Code})
	}
	return s
}

func (s *settlementSum) addFile(minor int64) {
	s.fileRows++
	s.file.Add(&s.file, big.NewInt(minor))
}

func (s *settlementSum) addLedger(minor int64) {
	s.ledgerRows++
	s.ledger.Add(&s.ledger, big.NewInt(minor))
}

func (s *settlementSum) addMatched(minor int64) {
	s.matchRows++
	s.matched.Add(&s.matched, big.NewInt(minor))
}

func (s *settlementSum) subMatched(minor int64) {
	s.matchRows--
	s.matched.Sub(&s.matched, big.NewInt(minor))
}

// finishTotals writes the sums, currencies in alphabetical order.
func (r *currencyTotals) finishTotals() {
	for i := range r.Totals {
		t := &r.Totals[i]
		s := r.totals[t.Currency]
		t.FileRows, t.LedgerRows, t.MatchedRows = s.fileRows, s.ledgerRows, s.matchRows
		t.FileAmount = json.Number(formatBig(&s.file, s.cur))
		t.LedgerAmount = json.Number(formatBig(&s.ledger, s.cur))
		t.Difference = json.Number(formatBig(new(big.Int).Sub(&s.file, &s.ledger), s.cur))
		t.MatchedAmount = json.Number(formatBig(&s.matched, s.cur))
	}
	sort.Slice(r.Totals, func(i, j int) bool { return r.Totals[i].Currency < r.Totals[j].Currency })
}

// formatBig writes minor units of cur as a decimal, like
// postings.FormatMinor, for sums beyond int64.
func formatBig(n *big.Int, cur postings.Currency) string {
	if n.IsInt64() {
		return postings.FormatMinor(n.Int64(), cur)
	}
	digits := new(big.Int).Abs(n).String()
	exp := int(cur.Exponent)
	if exp > 0 {
		digits = digits[:len(digits)-exp] + "." + digits[len(digits)-exp:] // beyond int64: more digits than exp
	}
	if n.Sign() < 0 {
		return "-" + digits
	}
	return digits
}

// writeTotals prints the totals as a report's first table; ledgerItems
// names what the ledger's side counts (clearings, deposits, …).
func (r *currencyTotals) writeTotals(w io.Writer, ledgerItems string) error {
	tb := newTable([]string{"CURRENCY", "FILE ROWS", "FILE AMOUNT", ledgerItems, "LEDGER AMOUNT", "FILE − LEDGER",
		"MATCHED ROWS", "MATCHED AMOUNT"}, 1, 2, 3, 4, 5, 6, 7)
	for _, t := range r.Totals {
		tb.add(t.Currency, strconv.FormatInt(t.FileRows, 10), string(t.FileAmount), strconv.FormatInt(t.LedgerRows, 10),
			string(t.LedgerAmount), string(t.Difference), strconv.FormatInt(t.MatchedRows, 10), string(t.MatchedAmount))
	}
	if len(r.Totals) == 0 {
		tb.add("(none)", "0", "", "0", "", "", "0", "")
	}
	if err := tb.write(w); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w)
	return err
}
