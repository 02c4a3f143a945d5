package reconcile

import (
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strconv"
	"time"

	"github.com/paygate/gateway/postings"
)

// add counts an item and lists it while there is room.
func (r *SettlementReport) add(it SettlementItem) {
	c := &r.Counts
	counters := map[string]*int64{CategoryAmountDiffers: &c.AmountDiffers, CategoryDateDiffers: &c.DateDiffers,
		CategoryOutsidePeriod: &c.OutsidePeriod, CategoryAlreadyReconciled: &c.AlreadyReconciled,
		CategoryTestMerchant: &c.TestMerchant, CategoryMissingInLedger: &c.MissingInLedger,
		CategoryMissingInFile: &c.MissingInFile, CategoryDuplicateInFile: &c.DuplicateInFile,
		CategoryInvalidRow: &c.InvalidRow, CategoryEmptyFile: &c.EmptyFile}
	n, ok := counters[it.Category]
	if !ok {
		panic("reconcile: unknown category " + it.Category)
	}
	*n++
	if len(r.Items) >= settlementItemsMax {
		r.ItemsOmitted++
		return
	}
	r.Items = append(r.Items, it)
}

// categoryRank orders a report's items: the file as a whole, money billed
// twice or wrongly, then what is missing, then the file's own faults.
var categoryRank = map[string]int{CategoryEmptyFile: 0, CategoryAlreadyReconciled: 1, CategoryAmountDiffers: 2,
	CategoryDateDiffers: 3, CategoryOutsidePeriod: 4, CategoryTestMerchant: 5, CategoryMissingInLedger: 6,
	CategoryMissingInFile: 7, CategoryDuplicateInFile: 8, CategoryInvalidRow: 9}

// sortItems orders the items by category, then by the file's line (the
// ledger's order for missing_in_file).
func (r *SettlementReport) sortItems() {
	sort.SliceStable(r.Items, func(i, j int) bool {
		a, b := &r.Items[i], &r.Items[j]
		if ra, rb := categoryRank[a.Category], categoryRank[b.Category]; ra != rb {
			return ra < rb
		}
		return a.Line < b.Line
	})
}

// verdict is the report's verdict (verdict.go).
func (r *SettlementReport) verdict() Verdict {
	if toAct := r.Counts.ToAct(); toAct > 0 {
		return discrepanciesVerdict(toAct, r.Rows+r.Counts.MissingInFile+r.Counts.EmptyFile)
	}
	if r.Rows == 0 {
		return matchedVerdict(fmt.Sprintf("the file and the ledger both have no clearings in the period %s", r.period()))
	}
	return matchedVerdict(fmt.Sprintf("every row matched and the ledger has no clearing of the period %s that the file lacks", r.period()))
}

func (r *SettlementReport) period() string {
	if r.From == r.To {
		return r.From
	}
	return r.From + "/" + r.To
}

// settlementSum accumulates one currency's totals exactly.
type settlementSum struct {
	cur                             postings.Currency
	fileRows, ledgerRows, matchRows int64
	file, ledger, matched           big.Int
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
func (r *SettlementReport) finishTotals() {
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

// WriteText prints the report for a person: what was reconciled, the
// totals per currency (file against ledger), each row or clearing to act
// on, the counts, what was recorded, and the verdict last.
func (r *SettlementReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "Settlement file %s (sha256 %s): %d rows; period %s (UTC)\n\n", printable(r.File.Name), r.File.SHA256, r.Rows, r.period())
	tb := newTable([]string{"CURRENCY", "FILE ROWS", "FILE AMOUNT", "LEDGER CLEARINGS", "LEDGER AMOUNT", "FILE − LEDGER",
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
	fmt.Fprintln(w)
	if len(r.Items) > 0 {
		if err := r.writeItems(w); err != nil {
			return err
		}
	}
	c := r.Counts
	fmt.Fprintf(w, "%s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d\n",
		CategoryMatched, c.Matched, CategoryAmountDiffers, c.AmountDiffers, CategoryDateDiffers, c.DateDiffers,
		CategoryOutsidePeriod, c.OutsidePeriod, CategoryAlreadyReconciled, c.AlreadyReconciled, CategoryTestMerchant, c.TestMerchant,
		CategoryMissingInLedger, c.MissingInLedger, CategoryMissingInFile, c.MissingInFile,
		CategoryDuplicateInFile, c.DuplicateInFile, CategoryInvalidRow, c.InvalidRow, CategoryEmptyFile, c.EmptyFile)
	fmt.Fprintln(w, r.RecordLine())
	_, err := fmt.Fprintln(w, r.Verdict.Line())
	return err
}

// RecordLine says what was recorded, for the text report and the console.
func (r *SettlementReport) RecordLine() string {
	switch {
	case r.Recorded != nil && r.AlreadyRecorded:
		return fmt.Sprintf("Already recorded: this file was reconciled as run %d on %s by %s; nothing recorded again",
			r.Recorded.ID, r.Recorded.RecordedAt.Format(time.RFC3339), printable(r.Recorded.Actor))
	case r.Recorded != nil:
		return fmt.Sprintf("Recorded: run %d, %d clearings, by %s", r.Recorded.ID, r.Recorded.Items, printable(r.Recorded.Actor))
	case r.OK():
		return "Not recorded: no record store"
	}
	return "Not recorded: a file with discrepancies is not accepted; reconcile the corrected file"
}

func (r *SettlementReport) writeItems(w io.Writer) error {
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
	_, err := fmt.Fprintln(w)
	return err
}

func moneyText(m *postings.Money) string {
	if m == nil {
		return ""
	}
	return m.String()
}
