package reconcile

import (
	"fmt"
	"io"
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

// WriteText prints the report for a person: what was reconciled, the
// totals per currency (file against ledger), each row or clearing to act
// on, the counts, what was recorded, and the verdict last.
func (r *SettlementReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "Settlement file %s (sha256 %s): %d rows; period %s (UTC)\n\n", printable(r.File.Name), r.File.SHA256, r.Rows, r.period())
	if err := r.writeTotals(w, "LEDGER CLEARINGS"); err != nil {
		return err
	}
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
	return recordedText(r.Recorded, r.AlreadyRecorded, r.OK(), "clearings")
}

// recordedText says what a reconciliation recorded; items names what its run
// accounts for.
func recordedText(run *Run, already, ok bool, items string) string {
	switch {
	case run != nil && already:
		return fmt.Sprintf("Already recorded: this file was reconciled as run %d on %s by %s; nothing recorded again",
			run.ID, run.RecordedAt.Format(time.RFC3339), printable(run.Actor))
	case run != nil:
		return fmt.Sprintf("Recorded: run %d, %d %s, by %s", run.ID, run.Items, items, printable(run.Actor))
	case ok:
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
