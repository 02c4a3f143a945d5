package reconcile

import (
	"context"
	"fmt"
	"io"
)

// add counts an item and lists it while there is room.
func (r *BankReport) add(it BankItem) { r.fileRecord.add(r.Counts.categories(), it.Category, it) }

// bankCategoryRank orders a bank report's items as a settlement report's:
// the file as a whole, money counted twice or wrongly, what is missing,
// then the file's own faults.
var bankCategoryRank = map[string]int{CategoryEmptyFile: 0, CategoryAlreadyReconciled: 1, CategoryAmountDiffers: 2,
	CategoryCurrencyDiffers: 3, CategoryDateDiffers: 4, CategoryOutsidePeriod: 5, CategoryMissingInLedger: 6,
	CategoryMissingInFile: 7, CategoryDuplicateInFile: 8, CategoryInvalidRow: 9}

func (r *BankReport) sortItems() {
	sortByRank(r.Items, bankCategoryRank, func(it *BankItem) (string, int64) { return it.Category, it.Line })
}

func (r *BankReport) finish() {
	r.Verdict = linesVerdict(r.Counts.ToAct(), r.Rows+r.Counts.MissingInFile+r.Counts.EmptyFile, r.Rows, r.period(), "statement", "deposits")
}

// record records a statement that matched completely (kind bank_deposit);
// a deposit another run recorded meanwhile turns its line into
// already_reconciled, and nothing is recorded.
func (m *bankMatcher) record(ctx context.Context, in BankInput, sum []byte) error {
	rep := m.rep
	return rep.record(ctx, &m.fileRun, &rep.fileSide, &rep.Counts.Matched, KindBankDeposit, sum, in.Name, in.Actor,
		func(it matchedItem, detail string) {
			rep.add(BankItem{Category: CategoryAlreadyReconciled, Line: it.Line, FileAmount: &it.amount, Detail: detail})
		})
}

// RecordLine says what was recorded, for the text report and the console.
func (r *BankReport) RecordLine() string {
	return recordedText(r.Recorded, r.AlreadyRecorded, r.OK(), "deposits")
}

// WriteText prints the report for a person (reportText): the statement,
// the totals, each line or deposit to act on, the counts, what was
// recorded, and the verdict last.
func (r *BankReport) WriteText(w io.Writer) error {
	items := itemsTable(r.Items, []string{"CATEGORY", "LINE", "VALUE DATE", "REFERENCE", "FILE AMOUNT", "LEDGER AMOUNT", "ENTRY", "DETAIL"},
		[]int{1, 4, 5, 6}, func(it *BankItem) []string {
			return []string{it.Category, numberCell(it.Line), it.ValueDate, it.Reference, moneyText(it.FileAmount),
				moneyText(it.LedgerAmount), numberCell(it.Seq), it.Detail}
		})
	return reportText{head: fmt.Sprintf("Bank statement %s (sha256 %s) for shop %s: %d lines; period %s (UTC)", printable(r.File.Name),
		r.File.SHA256, r.ShopNo, r.Rows, r.period()), ledgerItems: "LEDGER DEPOSITS", items: items, omitted: r.ItemsOmitted,
		counts: r.Counts.categories(), recorded: r.RecordLine(), verdict: r.Verdict}.write(w, &r.fileSide)
}
