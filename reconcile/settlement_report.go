package reconcile

import (
	"fmt"
	"io"
	"time"

	"github.com/paygate/gateway/postings"
)

// add counts an item and lists it while there is room.
func (r *SettlementReport) add(it SettlementItem) {
	r.fileRecord.add(r.Counts.categories(), it.Category, it)
}

// categoryRank orders a report's items: the file as a whole, money billed
// twice or wrongly, then what is missing, then the file's own faults.
var categoryRank = map[string]int{CategoryEmptyFile: 0, CategoryAlreadyReconciled: 1, CategoryAmountDiffers: 2,
	CategoryDateDiffers: 3, CategoryOutsidePeriod: 4, CategoryTestMerchant: 5, CategoryMissingInLedger: 6,
	CategoryMissingInFile: 7, CategoryDuplicateInFile: 8, CategoryInvalidRow: 9}

// sortItems orders the items by category, then by the file's line (the
// ledger's order for missing_in_file).
func (r *SettlementReport) sortItems() {
	sortByRank(r.Items, categoryRank, func(it *SettlementItem) (string, int64) { return it.Category, it.Line })
}

func (r *SettlementReport) finish() { r.Verdict = r.verdict() }

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

// WriteText prints the report for a person (reportText): what was
// reconciled, the totals per currency (file against ledger), each row or
// clearing to act on, the counts, what was recorded, and the verdict last.
func (r *SettlementReport) WriteText(w io.Writer) error {
	items := itemsTable(r.Items, []string{"CATEGORY", "LINE", "AUTH ID", "MESSAGE ID", "DATE", "FILE AMOUNT", "LEDGER AMOUNT", "SHOP",
		"ENTRY", "DETAIL"}, []int{1, 5, 6, 8}, func(it *SettlementItem) []string {
		msg := it.MessageID
		if msg == "" {
			msg = it.LedgerMessageID
		}
		return []string{it.Category, numberCell(it.Line), it.AuthID, msg, it.Date, moneyText(it.FileAmount), moneyText(it.LedgerAmount),
			it.ShopNo, numberCell(it.Seq), it.Detail}
	})
	return reportText{head: fmt.Sprintf("Settlement file %s (sha256 %s): %d rows; period %s (UTC)", printable(r.File.Name),
		r.File.SHA256, r.Rows, r.period()), ledgerItems: "LEDGER CLEARINGS", items: items, omitted: r.ItemsOmitted,
		counts: r.Counts.categories(), recorded: r.RecordLine(), verdict: r.Verdict}.write(w, &r.fileSide)
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

func moneyText(m *postings.Money) string {
	if m == nil {
		return ""
	}
	return m.String()
}
