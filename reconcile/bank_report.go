package reconcile

import (
	"fmt"
	"io"
)

// bankSpec: a bank report's items go as a settlement report's: the file
// as a whole, money counted twice or wrongly, what is missing, then the
// file's own faults.
var bankSpec = reportSpec[BankItem]{kind: KindBankDeposit, file: "statement", items: "deposits",
	rank: map[string]int{CategoryEmptyFile: 0, CategoryAlreadyReconciled: 1, CategoryAmountDiffers: 2, CategoryCurrencyDiffers: 3,
		CategoryDateDiffers: 4, CategoryOutsidePeriod: 5, CategoryMissingInLedger: 6, CategoryMissingInFile: 7,
		CategoryDuplicateInFile: 8, CategoryInvalidRow: 9},
	taken: func(it matchedItem, detail string) BankItem {
		return BankItem{Category: CategoryAlreadyReconciled, Line: it.Line, FileAmount: &it.amount, Detail: detail}
	}}

func (it BankItem) key() (string, int64) { return it.Category, it.Line }

// WriteText prints the report for a person (fileReport.writeText): the
// statement, the totals, each line or deposit to act on, the counts, what
// was recorded, and the verdict last.
func (r *BankReport) WriteText(w io.Writer) error {
	return r.writeText(w, fmt.Sprintf("Bank statement %s (sha256 %s) for shop %s: %d lines; period %s (UTC)", printable(r.File.Name),
		r.File.SHA256, r.ShopNo, r.Rows, r.period()), "LEDGER DEPOSITS",
		[]string{"CATEGORY", "LINE", "VALUE DATE", "REFERENCE", "FILE AMOUNT", "LEDGER AMOUNT", "ENTRY", "DETAIL"}, []int{1, 4, 5, 6},
		func(it *BankItem) []string {
			return []string{it.Category, numberCell(it.Line), it.ValueDate, it.Reference, moneyText(it.FileAmount),
				moneyText(it.LedgerAmount), numberCell(it.Seq), it.Detail}
		})
}
