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

// add counts an item and lists it while there is room.
func (r *SettlementReport) add(it SettlementItem) {
	switch it.Category {
	case CategoryAmountDiffers:
		r.Counts.AmountDiffers++
	case CategoryMissingInLedger:
		r.Counts.MissingInLedger++
	case CategoryMissingInFile:
		r.Counts.MissingInFile++
	case CategoryDuplicateInFile:
		r.Counts.DuplicateInFile++
	case CategoryInvalidRow:
		r.Counts.InvalidRow++
	default:
		panic("reconcile: unknown category " + it.Category)
	}
	if len(r.Items) >= settlementItemsMax {
		r.ItemsOmitted++
		return
	}
	r.Items = append(r.Items, it)
}

// categoryRank orders a report's items: money first, then what is
// missing, then the file's own faults.
var categoryRank = map[string]int{CategoryAmountDiffers: 0, CategoryMissingInLedger: 1, CategoryMissingInFile: 2,
	CategoryDuplicateInFile: 3, CategoryInvalidRow: 4}

// sortItems orders the items by category, then by the file's line, then by
// the ledger's time.
func (r *SettlementReport) sortItems() {
	sort.SliceStable(r.Items, func(i, j int) bool {
		a, b := &r.Items[i], &r.Items[j]
		if ra, rb := categoryRank[a.Category], categoryRank[b.Category]; ra != rb {
			return ra < rb
		}
		return a.Line < b.Line
	})
}

// settlementSum accumulates one currency's totals exactly.
type settlementSum struct {
	cur                 postings.Currency
	fileRows, matchRows int64
	file, matched       big.Int
}

func (r *SettlementReport) sum(m postings.Money) *settlementSum {
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

func (s *settlementSum) addMatched(minor int64) {
	s.matchRows++
	s.matched.Add(&s.matched, big.NewInt(minor))
}

func (r *SettlementReport) finishTotals() {
	for i := range r.Totals {
		t := &r.Totals[i]
		s := r.totals[t.Currency]
		t.FileRows, t.MatchedRows = s.fileRows, s.matchRows
		t.FileAmount = json.Number(formatBig(&s.file, s.cur))
		t.MatchedAmount = json.Number(formatBig(&s.matched, s.cur))
	}
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

// WriteText prints the report for a person: each row or entry to act on,
// the totals per currency, the counts and a verdict.
func (r *SettlementReport) WriteText(w io.Writer) error {
	span := "no readable dates"
	if r.From != "" {
		span = fmt.Sprintf("dated %s to %s", r.From, r.To)
	}
	fmt.Fprintf(w, "Settlement file: %d rows, %s\n\n", r.Rows, span)
	if len(r.Items) > 0 {
		tb := newTable([]string{"CATEGORY", "LINE", "AUTH ID", "MESSAGE ID", "DATE", "FILE AMOUNT", "LEDGER AMOUNT", "SHOP", "ENTRY", "DETAIL"},
			1, 5, 6, 8)
		for _, it := range r.Items {
			line, entry, msg := "", "", it.MessageID
			if it.Line > 0 {
				line = strconv.FormatInt(it.Line, 10)
			}
			if it.Seq > 0 {
				entry = strconv.FormatInt(it.Seq, 10)
			}
			if msg == "" {
				msg = it.LedgerMessageID
			}
			tb.add(it.Category, line, it.AuthID, msg, it.Date, moneyText(it.FileAmount), moneyText(it.LedgerAmount),
				it.ShopNo, entry, it.Detail)
		}
		if err := tb.write(w); err != nil {
			return err
		}
		if r.ItemsOmitted > 0 {
			fmt.Fprintf(w, "… and %d more, not listed (the counts below include them)\n", r.ItemsOmitted)
		}
		fmt.Fprintln(w)
	}
	if len(r.Totals) > 0 {
		tb := newTable([]string{"CURRENCY", "FILE ROWS", "FILE AMOUNT", "MATCHED ROWS", "MATCHED AMOUNT"}, 1, 2, 3, 4)
		for _, t := range r.Totals {
			tb.add(t.Currency, strconv.FormatInt(t.FileRows, 10), string(t.FileAmount), strconv.FormatInt(t.MatchedRows, 10), string(t.MatchedAmount))
		}
		if err := tb.write(w); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	c := r.Counts
	fmt.Fprintf(w, "%s %d, %s %d, %s %d, %s %d, %s %d, %s %d\n", CategoryMatched, c.Matched, CategoryAmountDiffers, c.AmountDiffers,
		CategoryMissingInLedger, c.MissingInLedger, CategoryMissingInFile, c.MissingInFile,
		CategoryDuplicateInFile, c.DuplicateInFile, CategoryInvalidRow, c.InvalidRow)
	if r.OK() {
		_, err := fmt.Fprintf(w, "OK: every row matched and the ledger has no clearing of the file's days that the file lacks\n")
		return err
	}
	toAct := c.AmountDiffers + c.MissingInLedger + c.MissingInFile + c.DuplicateInFile + c.InvalidRow
	_, err := fmt.Fprintf(w, "FAILED: %d of %d rows and entries need attention\n", toAct, r.Rows+c.MissingInFile)
	return err
}

func moneyText(m *postings.Money) string {
	if m == nil {
		return ""
	}
	return m.String()
}
