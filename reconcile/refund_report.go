package reconcile

import (
	"context"
	"fmt"
	"io"
)

func (r *RefundReport) add(it RefundItem) { r.fileRecord.add(r.Counts.categories(), it.Category, it) }

// refundCategoryRank orders the items as a settlement report's.
var refundCategoryRank = map[string]int{CategoryEmptyFile: 0, CategoryAlreadyReconciled: 1, CategoryAmountDiffers: 2,
	CategoryCardDiffers: 3, CategoryDateDiffers: 4, CategoryOutsidePeriod: 5, CategoryTestMerchant: 6, CategoryMissingInLedger: 7,
	CategoryMissingInFile: 8, CategoryDuplicateInFile: 9, CategoryInvalidRow: 10}

func (r *RefundReport) sortItems() {
	sortByRank(r.Items, refundCategoryRank, func(it *RefundItem) (string, int64) { return it.Category, it.Line })
}

func (r *RefundReport) finish() {
	r.Verdict = linesVerdict(r.Counts.ToAct(), r.Rows+r.Counts.MissingInFile+r.Counts.EmptyFile, r.Rows, r.period(), "file", "refunds")
}

// record records a file that matched completely (kind network_refund); a
// refund another run recorded meanwhile turns its row into
// already_reconciled, and nothing is recorded.
func (m *refundMatcher) record(ctx context.Context, in RefundInput, sum []byte) error {
	rep := m.rep
	return rep.record(ctx, &m.fileRun, &rep.fileSide, &rep.Counts.Matched, KindNetworkRefund, sum, in.Name, in.Actor,
		func(it matchedItem, detail string) {
			rep.add(RefundItem{Category: CategoryAlreadyReconciled, Line: it.Line, FileAmount: &it.amount, Detail: detail})
		})
}

// RecordLine says what was recorded, for the text report and the console.
func (r *RefundReport) RecordLine() string {
	return recordedText(r.Recorded, r.AlreadyRecorded, r.OK(), "refunds")
}

// WriteText prints the report (reportText): the file, the totals per
// currency, each row or refund to act on, the counts, what was recorded,
// the verdict last.
func (r *RefundReport) WriteText(w io.Writer) error {
	items := itemsTable(r.Items, []string{"CATEGORY", "LINE", "MESSAGE ID", "CARD", "DATE", "FILE AMOUNT", "SHOP", "SEQ", "LEDGER CARD",
		"LEDGER AMOUNT", "DETAIL"}, []int{1, 5, 7, 9}, func(it *RefundItem) []string {
		return []string{it.Category, numberCell(it.Line), it.MessageID, it.CardNo, it.Date, moneyText(it.FileAmount), it.ShopNo,
			numberCell(it.Seq), it.LedgerCardNo, moneyText(it.LedgerAmount), it.Detail}
	})
	return reportText{head: fmt.Sprintf("Refund file %s (sha256 %s): %d rows; period %s (UTC)", printable(r.File.Name), r.File.SHA256,
		r.Rows, r.period()), ledgerItems: "LEDGER REFUNDS", items: items, omitted: r.ItemsOmitted, counts: r.Counts.categories(),
		recorded: r.RecordLine(), verdict: r.Verdict}.write(w, &r.fileSide)
}
