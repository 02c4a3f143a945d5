package reconcile

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/paygate/gateway/postings"
)

func (r *RefundReport) add(it RefundItem) {
	c := &r.Counts
	countItem(map[string]*int64{CategoryAmountDiffers: &c.AmountDiffers, CategoryCardDiffers: &c.CardDiffers,
		CategoryDateDiffers: &c.DateDiffers, CategoryOutsidePeriod: &c.OutsidePeriod, CategoryAlreadyReconciled: &c.AlreadyReconciled,
		CategoryTestMerchant: &c.TestMerchant, CategoryMissingInLedger: &c.MissingInLedger, CategoryMissingInFile: &c.MissingInFile,
		CategoryDuplicateInFile: &c.DuplicateInFile, CategoryInvalidRow: &c.InvalidRow, CategoryEmptyFile: &c.EmptyFile},
		it.Category, &r.Items, &r.ItemsOmitted, it)
}

// refundCategoryRank orders the items as a settlement report's.
var refundCategoryRank = map[string]int{CategoryEmptyFile: 0, CategoryAlreadyReconciled: 1, CategoryAmountDiffers: 2,
	CategoryCardDiffers: 3, CategoryDateDiffers: 4, CategoryOutsidePeriod: 5, CategoryTestMerchant: 6, CategoryMissingInLedger: 7,
	CategoryMissingInFile: 8, CategoryDuplicateInFile: 9, CategoryInvalidRow: 10}

func (r *RefundReport) sortItems() {
	sortByRank(r.Items, refundCategoryRank, func(it *RefundItem) (string, int64) { return it.Category, it.Line })
}

func (r *RefundReport) period() string { return periodText(r.From, r.To) }

func (r *RefundReport) finish() {
	r.Verdict = linesVerdict(r.Counts.ToAct(), r.Rows+r.Counts.MissingInFile+r.Counts.EmptyFile, r.Rows, r.period(), "file", "refunds")
}

// record records a file that matched completely (kind network_refund); a
// refund another run recorded meanwhile turns its row into
// already_reconciled, and nothing is recorded.
func (m *refundMatcher) record(ctx context.Context, in RefundInput, sum []byte) error {
	rep := m.rep
	run := Run{Kind: KindNetworkRefund, FileName: in.Name, From: rep.From, To: rep.To, Actor: in.Actor, Rows: rep.Rows}
	var err error
	rep.Recorded, rep.AlreadyRecorded, err = recordMatchedItems(ctx, m.rec, m.sameRun, run, sum, rep.matched, &rep.currencyTotals,
		&rep.Counts.Matched, func(line int64, amount *postings.Money, detail string) {
			rep.add(RefundItem{Category: CategoryAlreadyReconciled, Line: line, FileAmount: amount, Detail: detail})
		})
	return err
}

// RecordLine says what was recorded, for the text report and the console.
func (r *RefundReport) RecordLine() string {
	return recordedText(r.Recorded, r.AlreadyRecorded, r.OK(), "refunds")
}

// WriteText prints the report: the file, the totals per currency, each row
// or refund to act on, the counts, what was recorded, the verdict last.
func (r *RefundReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "Refund file %s (sha256 %s): %d rows; period %s (UTC)\n\n", printable(r.File.Name), r.File.SHA256, r.Rows, r.period())
	if err := r.writeTotals(w, "LEDGER REFUNDS"); err != nil {
		return err
	}
	if len(r.Items) > 0 {
		tb := newTable([]string{"CATEGORY", "LINE", "MESSAGE ID", "CARD", "DATE", "FILE AMOUNT", "SHOP", "SEQ", "LEDGER CARD",
			"LEDGER AMOUNT", "DETAIL"}, 1, 5, 7, 9)
		for _, it := range r.Items {
			line, seq := "", ""
			if it.Line > 0 {
				line = strconv.FormatInt(it.Line, 10)
			}
			if it.Seq > 0 {
				seq = strconv.FormatInt(it.Seq, 10)
			}
			tb.add(it.Category, line, it.MessageID, it.CardNo, it.Date, moneyText(it.FileAmount), it.ShopNo, seq, it.LedgerCardNo,
				moneyText(it.LedgerAmount), it.Detail)
		}
		if err := tb.write(w); err != nil {
			return err
		}
		writeItemsTail(w, r.ItemsOmitted)
	}
	c := r.Counts
	counts := fmt.Sprintf("%s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d",
		CategoryMatched, c.Matched, CategoryAmountDiffers, c.AmountDiffers, CategoryCardDiffers, c.CardDiffers,
		CategoryDateDiffers, c.DateDiffers, CategoryOutsidePeriod, c.OutsidePeriod, CategoryAlreadyReconciled, c.AlreadyReconciled,
		CategoryTestMerchant, c.TestMerchant, CategoryMissingInLedger, c.MissingInLedger, CategoryMissingInFile, c.MissingInFile,
		CategoryDuplicateInFile, c.DuplicateInFile, CategoryInvalidRow, c.InvalidRow, CategoryEmptyFile, c.EmptyFile)
	return writeVerdict(w, counts, r.RecordLine(), r.Verdict)
}
