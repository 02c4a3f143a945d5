package reconcile

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
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
	if len(r.Items) >= settlementItemsMax {
		r.ItemsOmitted++
		return
	}
	r.Items = append(r.Items, it)
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

func (r *BankReport) period() string {
	if r.From == r.To {
		return r.From
	}
	return r.From + "/" + r.To
}

func (r *BankReport) verdict() Verdict {
	if toAct := r.Counts.ToAct(); toAct > 0 {
		return discrepanciesVerdict(toAct, r.Rows+r.Counts.MissingInFile+r.Counts.EmptyFile)
	}
	if r.Rows == 0 {
		return matchedVerdict(fmt.Sprintf("the statement and the ledger both have no deposits in the period %s", r.period()))
	}
	return matchedVerdict(fmt.Sprintf("every line matched a deposit and the ledger has no deposit of the period %s that the statement lacks",
		r.period()))
}

// record records a statement that matched completely (kind bank_deposit);
// the same file again is the same run. A deposit another run recorded
// meanwhile turns its line into already_reconciled, and nothing is
// recorded.
func (m *bankMatcher) record(ctx context.Context, in BankInput, sum []byte) error {
	rep := m.rep
	if m.sameRun != nil {
		rep.Recorded, rep.AlreadyRecorded = m.sameRun, true
		return nil
	}
	run := Run{Kind: KindBankDeposit, FileName: recordText(in.Name, "(unnamed)"), From: rep.From, To: rep.To,
		Actor: recordText(in.Actor, "(unknown)"), Rows: rep.Rows}
	items := make([]RecordedItem, len(rep.matched))
	for i, mr := range rep.matched {
		items[i] = mr.RecordedItem
	}
	res, err := m.rec.Record(ctx, run, sum, items)
	if err != nil || len(res.Taken) == 0 {
		rep.Recorded, rep.AlreadyRecorded = res.Run, res.Existing
		return err
	}
	claims, err := m.rec.Claims(ctx, KindBankDeposit, res.Taken)
	if err != nil {
		return err
	}
	for _, it := range rep.matched {
		c, ok := claims[it.EntryID]
		if !ok {
			continue
		}
		amount := it.amount
		rep.Counts.Matched--
		rep.totals[amount.Currency.Code].subMatched(amount.Minor)
		rep.add(BankItem{Category: CategoryAlreadyReconciled, Line: it.Line, FileAmount: &amount, Detail: claimedDetail(c)})
	}
	rep.finishTotals()
	return nil
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
		if r.ItemsOmitted > 0 {
			fmt.Fprintf(w, "… and %d more, not listed (the counts below include them)\n", r.ItemsOmitted)
		}
		fmt.Fprintln(w)
	}
	c := r.Counts
	fmt.Fprintf(w, "%s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d\n",
		CategoryMatched, c.Matched, CategoryAmountDiffers, c.AmountDiffers, CategoryCurrencyDiffers, c.CurrencyDiffers,
		CategoryDateDiffers, c.DateDiffers, CategoryOutsidePeriod, c.OutsidePeriod, CategoryAlreadyReconciled, c.AlreadyReconciled,
		CategoryMissingInLedger, c.MissingInLedger, CategoryMissingInFile, c.MissingInFile,
		CategoryDuplicateInFile, c.DuplicateInFile, CategoryInvalidRow, c.InvalidRow, CategoryEmptyFile, c.EmptyFile)
	fmt.Fprintln(w, r.RecordLine())
	_, err := fmt.Fprintln(w, r.Verdict.Line())
	return err
}
