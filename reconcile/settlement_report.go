package reconcile

import (
	"fmt"
	"io"
	"time"

	"github.com/paygate/gateway/postings"
)

// settlementSpec: a report's items go the file as a whole first, money
// billed twice or wrongly, then what is missing, then the file's own
// faults.
var settlementSpec = reportSpec[SettlementItem]{kind: KindCardClearing, file: "file", items: "clearings", none: "no clearing",
	rank: map[string]int{CategoryEmptyFile: 0, CategoryAlreadyReconciled: 1, CategoryAmountDiffers: 2, CategoryDateDiffers: 3,
		CategoryOutsidePeriod: 4, CategoryTestMerchant: 5, CategoryMissingInLedger: 6, CategoryMissingInFile: 7,
		CategoryDuplicateInFile: 8, CategoryInvalidRow: 9},
	taken: func(it matchedItem, detail string) SettlementItem {
		return SettlementItem{Category: CategoryAlreadyReconciled, Line: it.Line, AuthID: it.id,
			FileAmount: &it.amount, FileCurrency: it.amount.Currency.Code, Detail: detail}
	}}

func (it SettlementItem) key() (string, int64) { return it.Category, it.Line }

// WriteText prints the report for a person (fileReport.writeText): what
// was reconciled, the totals per currency (file against ledger), each row
// or clearing to act on, the counts, what was recorded, and the verdict
// last.
func (r *SettlementReport) WriteText(w io.Writer) error {
	return r.writeText(w, fmt.Sprintf("Settlement file %s (sha256 %s): %d rows; period %s (UTC)", printable(r.File.Name),
		r.File.SHA256, r.Rows, r.period()), "LEDGER CLEARINGS", []string{"CATEGORY", "LINE", "AUTH ID", "MESSAGE ID", "DATE",
		"FILE AMOUNT", "LEDGER AMOUNT", "SHOP", "ENTRY", "DETAIL"}, []int{1, 5, 6, 8}, func(it *SettlementItem) []string {
		msg := it.MessageID
		if msg == "" {
			msg = it.LedgerMessageID
		}
		return []string{it.Category, numberCell(it.Line), it.AuthID, msg, it.Date, moneyText(it.FileAmount), moneyText(it.LedgerAmount),
			it.ShopNo, numberCell(it.Seq), it.Detail}
	})
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
