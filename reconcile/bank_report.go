package reconcile

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/paygate/gateway/postings"
)

// add counts an item and lists it while there is room.
func (r *BankReport) add(it BankItem) {
	c := &r.Counts
	counters := map[string]*int64{CategoryAmountDiffers: &c.AmountDiffers, CategoryCurrencyDiffers: &c.CurrencyDiffers,
		CategoryDateDiffers: &c.DateDiffers, CategoryOutsidePeriod: &c.OutsidePeriod,
		CategoryAlreadyReconciled: &c.AlreadyReconciled, CategoryMissingInLedger: &c.MissingInLedger,
		CategoryMissingInFile: &c.MissingInFile, CategoryDuplicateInFile: &c.DuplicateInFile,
		CategoryInvalidRow: &c.InvalidRow, CategoryEmptyFile: &c.EmptyFile}
	n, ok := counters[it.Category]
	if !ok {
		panic("reconcile: unknown category " + it.Category)
	}
	*n++
	listItem(&r.Items, &r.ItemsOmitted, it)
}

// bankCategoryRank orders a bank report's items as a settlement report's:
// the file as a whole, money counted twice or wrongly, what is missing,
// then the file's own faults.
var bankCategoryRank = map[string]int{CategoryEmptyFile: 0, CategoryAlreadyReconciled: 1, CategoryAmountDiffers: 2,
	CategoryCurrencyDiffers: 3, CategoryDateDiffers: 4, CategoryOutsidePeriod: 5, CategoryMissingInLedger: 6,
	CategoryMissingInFile: 7, CategoryDuplicateInFile: 8, CategoryInvalidRow: 9}

func (r *BankReport) sortItems() {
	sort.SliceStable(r.Items, func(i, j int) bool {
		a, b := &r.Items[i], &r.Items[j]
		if ra, rb := bankCategoryRank[a.Category], bankCategoryRank[b.Category]; ra != rb {
			return ra < rb
		}
		return a.Line < b.Line
	})
}

func (r *BankReport) period() string { return periodText(r.From, r.To) }

func (r *BankReport) finish() { r.Verdict = r.verdict() }

func (r *BankReport) verdict() Verdict {
	return linesVerdict(r.Counts.ToAct(), r.Rows+r.Counts.MissingInFile+r.Counts.EmptyFile, r.Rows, r.period(), "statement", "deposits")
}

// record records a statement that matched completely (kind bank_deposit);
// a deposit another run recorded meanwhile turns its line into
// already_reconciled, and nothing is recorded.
func (m *bankMatcher) record(ctx context.Context, in BankInput, sum []byte) error {
	rep := m.rep
	run := Run{Kind: KindBankDeposit, FileName: in.Name, From: rep.From, To: rep.To, Actor: in.Actor, Rows: rep.Rows}
	var err error
	rep.Recorded, rep.AlreadyRecorded, err = recordMatchedItems(ctx, m.rec, m.sameRun, run, sum, rep.matched, &rep.currencyTotals,
		&rep.Counts.Matched, func(line int64, amount *postings.Money, detail string) {
			rep.add(BankItem{Category: CategoryAlreadyReconciled, Line: line, FileAmount: amount, Detail: detail})
		})
	return err
}

// RecordLine says what was recorded, for the text report and the console.
func (r *BankReport) RecordLine() string {
	return recordedText(r.Recorded, r.AlreadyRecorded, r.OK(), "deposits")
}

// WriteText prints the report for a person: the statement, the totals per
// currency (file against ledger), each line or deposit to act on, the
// counts, what was recorded, and the verdict last.
func (r *BankReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "Bank statement %s (sha256 %s) for shop %s: %d lines; period %s (UTC)\n\n", printable(r.File.Name), r.File.SHA256,
		r.ShopNo, r.Rows, r.period())
	if err := r.writeTotals(w, "LEDGER DEPOSITS"); err != nil {
		return err
	}
	if len(r.Items) > 0 {
		tb := newTable([]string{"CATEGORY", "LINE", "VALUE DATE", "REFERENCE", "FILE AMOUNT", "LEDGER AMOUNT", "ENTRY", "DETAIL"}, 1, 4, 5, 6)
		for _, it := range r.Items {
			line, entry := "", ""
			if it.Line > 0 {
				line = strconv.FormatInt(it.Line, 10)
			}
			if it.Seq > 0 {
				entry = strconv.FormatInt(it.Seq, 10)
			}
			tb.add(it.Category, line, it.ValueDate, it.Reference, moneyText(it.FileAmount), moneyText(it.LedgerAmount), entry, it.Detail)
		}
		if err := tb.write(w); err != nil {
			return err
		}
		writeItemsTail(w, r.ItemsOmitted)
	}
	c := r.Counts
	counts := fmt.Sprintf("%s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d",
		CategoryMatched, c.Matched, CategoryAmountDiffers, c.AmountDiffers, CategoryCurrencyDiffers, c.CurrencyDiffers,
		CategoryDateDiffers, c.DateDiffers, CategoryOutsidePeriod, c.OutsidePeriod, CategoryAlreadyReconciled, c.AlreadyReconciled,
		CategoryMissingInLedger, c.MissingInLedger, CategoryMissingInFile, c.MissingInFile,
		CategoryDuplicateInFile, c.DuplicateInFile, CategoryInvalidRow, c.InvalidRow, CategoryEmptyFile, c.EmptyFile)
	return writeVerdict(w, counts, r.RecordLine(), r.Verdict)
}
