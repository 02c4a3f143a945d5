package reconcile

import (
	"fmt"
	"io"
)

// railSpec: the items go as a settlement report's.
var railSpec = reportSpec[RailItem]{kind: KindRailRemittance, file: "report", items: "settlements and returns",
	rank: map[string]int{CategoryEmptyFile: 0, CategoryAlreadyReconciled: 1, CategoryStatusDiffers: 2, CategoryAmountDiffers: 3,
		CategoryFeeDiffers: 4, CategoryDateDiffers: 5, CategoryOutsidePeriod: 6, CategoryMissingInLedger: 7, CategoryMissingInFile: 8,
		CategoryDuplicateInFile: 9, CategoryInvalidRow: 10},
	taken: func(it matchedItem, detail string) RailItem {
		return RailItem{Category: CategoryAlreadyReconciled, Line: it.Line, FileAmount: &it.amount, Detail: detail}
	}}

func (it RailItem) key() (string, int64) { return it.Category, it.Line }

// WriteText prints the report (fileReport.writeText): the file, the
// totals per currency, each row or entry to act on, the counts, what was
// recorded, the verdict last.
func (r *RailReport) WriteText(w io.Writer) error {
	return r.writeText(w, fmt.Sprintf("Rail report %s (sha256 %s): %d rows; period %s (UTC)", printable(r.File.Name), r.File.SHA256,
		r.Rows, r.period()), "LEDGER ENTRIES", []string{"CATEGORY", "LINE", "TX ID", "STATUS", "DATE", "FILE AMOUNT", "FILE FEE", "LEDGER",
		"LEDGER AMOUNT", "LEDGER FEE", "DETAIL"}, []int{1, 5, 6, 8, 9}, func(it *RailItem) []string {
		return []string{it.Category, numberCell(it.Line), it.TxID, it.Status, it.Date, moneyText(it.FileAmount), moneyText(it.FileFee),
			it.LedgerKind, moneyText(it.LedgerAmount), moneyText(it.LedgerFee), it.Detail}
	})
}
