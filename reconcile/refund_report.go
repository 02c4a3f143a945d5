package reconcile

import (
	"fmt"
	"io"
)

// refundSpec: the items go as a settlement report's.
var refundSpec = reportSpec[RefundItem]{kind: KindNetworkRefund, file: "file", items: "refunds",
	rank: map[string]int{CategoryEmptyFile: 0, CategoryAlreadyReconciled: 1, CategoryAmountDiffers: 2, CategoryCardDiffers: 3,
		CategoryDateDiffers: 4, CategoryOutsidePeriod: 5, CategoryTestMerchant: 6, CategoryMissingInLedger: 7, CategoryMissingInFile: 8,
		CategoryDuplicateInFile: 9, CategoryInvalidRow: 10},
	taken: func(it matchedItem, detail string) RefundItem {
		return RefundItem{Category: CategoryAlreadyReconciled, Line: it.Line, FileAmount: &it.amount, Detail: detail}
	}}

func (it RefundItem) key() (string, int64) { return it.Category, it.Line }

// WriteText prints the report (fileReport.writeText): the file, the
// totals per currency, each row or refund to act on, the counts, what was
// recorded, the verdict last.
func (r *RefundReport) WriteText(w io.Writer) error {
	return r.writeText(w, fmt.Sprintf("Refund file %s (sha256 %s): %d rows; period %s (UTC)", printable(r.File.Name), r.File.SHA256,
		r.Rows, r.period()), "LEDGER REFUNDS", []string{"CATEGORY", "LINE", "MESSAGE ID", "CARD", "DATE", "FILE AMOUNT", "SHOP", "SEQ",
		"LEDGER CARD", "LEDGER AMOUNT", "DETAIL"}, []int{1, 5, 7, 9}, func(it *RefundItem) []string {
		return []string{it.Category, numberCell(it.Line), it.MessageID, it.CardNo, it.Date, moneyText(it.FileAmount), it.ShopNo,
			numberCell(it.Seq), it.LedgerCardNo, moneyText(it.LedgerAmount), it.Detail}
	})
}
