package reconcile

import (
	"context"
	"fmt"
	"io"
)

func (r *RailReport) add(it RailItem) { r.fileRecord.add(r.Counts.categories(), it.Category, it) }

// railCategoryRank orders the items as a settlement report's.
var railCategoryRank = map[string]int{CategoryEmptyFile: 0, CategoryAlreadyReconciled: 1, CategoryStatusDiffers: 2,
	CategoryAmountDiffers: 3, CategoryFeeDiffers: 4, CategoryDateDiffers: 5, CategoryOutsidePeriod: 6,
	CategoryMissingInLedger: 7, CategoryMissingInFile: 8, CategoryDuplicateInFile: 9, CategoryInvalidRow: 10}

func (r *RailReport) sortItems() {
	sortByRank(r.Items, railCategoryRank, func(it *RailItem) (string, int64) { return it.Category, it.Line })
}

func (r *RailReport) finish() {
	r.Verdict = linesVerdict(r.Counts.ToAct(), r.Rows+r.Counts.MissingInFile+r.Counts.EmptyFile, r.Rows, r.period(), "report",
		"settlements and returns")
}

// record records a report that matched completely (kind rail_remittance).
func (m *railMatcher) record(ctx context.Context, in RailInput, sum []byte) error {
	rep := m.rep
	return rep.record(ctx, &m.fileRun, &rep.fileSide, &rep.Counts.Matched, KindRailRemittance, sum, in.Name, in.Actor,
		func(it matchedItem, detail string) {
			rep.add(RailItem{Category: CategoryAlreadyReconciled, Line: it.Line, FileAmount: &it.amount, Detail: detail})
		})
}

// RecordLine says what was recorded, for the text report and the console.
func (r *RailReport) RecordLine() string {
	return recordedText(r.Recorded, r.AlreadyRecorded, r.OK(), "settlements and returns")
}

// WriteText prints the report (reportText): the file, the totals per
// currency, each row or entry to act on, the counts, what was recorded,
// the verdict last.
func (r *RailReport) WriteText(w io.Writer) error {
	items := itemsTable(r.Items, []string{"CATEGORY", "LINE", "TX ID", "STATUS", "DATE", "FILE AMOUNT", "FILE FEE", "LEDGER",
		"LEDGER AMOUNT", "LEDGER FEE", "DETAIL"}, []int{1, 5, 6, 8, 9}, func(it *RailItem) []string {
		return []string{it.Category, numberCell(it.Line), it.TxID, it.Status, it.Date, moneyText(it.FileAmount), moneyText(it.FileFee),
			it.LedgerKind, moneyText(it.LedgerAmount), moneyText(it.LedgerFee), it.Detail}
	})
	return reportText{head: fmt.Sprintf("Rail report %s (sha256 %s): %d rows; period %s (UTC)", printable(r.File.Name), r.File.SHA256,
		r.Rows, r.period()), ledgerItems: "LEDGER ENTRIES", items: items, omitted: r.ItemsOmitted, counts: r.Counts.categories(),
		recorded: r.RecordLine(), verdict: r.Verdict}.write(w, &r.fileSide)
}
