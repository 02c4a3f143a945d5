package reconcile

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/paygate/gateway/postings"
)

func (r *RailReport) add(it RailItem) {
	c := &r.Counts
	counters := map[string]*int64{CategoryStatusDiffers: &c.StatusDiffers, CategoryAmountDiffers: &c.AmountDiffers,
		CategoryFeeDiffers: &c.FeeDiffers, CategoryDateDiffers: &c.DateDiffers, CategoryOutsidePeriod: &c.OutsidePeriod,
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

// railCategoryRank orders the items as a settlement report's.
var railCategoryRank = map[string]int{CategoryEmptyFile: 0, CategoryAlreadyReconciled: 1, CategoryStatusDiffers: 2,
	CategoryAmountDiffers: 3, CategoryFeeDiffers: 4, CategoryDateDiffers: 5, CategoryOutsidePeriod: 6,
	CategoryMissingInLedger: 7, CategoryMissingInFile: 8, CategoryDuplicateInFile: 9, CategoryInvalidRow: 10}

func (r *RailReport) sortItems() {
	sort.SliceStable(r.Items, func(i, j int) bool {
		if ra, rb := railCategoryRank[r.Items[i].Category], railCategoryRank[r.Items[j].Category]; ra != rb {
			return ra < rb
		}
		return r.Items[i].Line < r.Items[j].Line
	})
}

func (r *RailReport) period() string { return periodText(r.From, r.To) }

func (r *RailReport) finish() { r.Verdict = r.verdict() }

func (r *RailReport) verdict() Verdict {
	return linesVerdict(r.Counts.ToAct(), r.Rows+r.Counts.MissingInFile+r.Counts.EmptyFile, r.Rows, r.period(), "report",
		"settlements and returns")
}

// record records a report that matched completely (kind rail_remittance).
func (m *railMatcher) record(ctx context.Context, in RailInput, sum []byte) error {
	rep := m.rep
	run := Run{Kind: KindRailRemittance, FileName: in.Name, From: rep.From, To: rep.To, Actor: in.Actor, Rows: rep.Rows}
	var err error
	rep.Recorded, rep.AlreadyRecorded, err = recordMatchedItems(ctx, m.rec, m.sameRun, run, sum, rep.matched, &rep.currencyTotals,
		&rep.Counts.Matched, func(line int64, amount *postings.Money, detail string) {
			rep.add(RailItem{Category: CategoryAlreadyReconciled, Line: line, FileAmount: amount, Detail: detail})
		})
	return err
}

// RecordLine says what was recorded, for the text report and the console.
func (r *RailReport) RecordLine() string {
	return recordedText(r.Recorded, r.AlreadyRecorded, r.OK(), "settlements and returns")
}

// WriteText prints the report: the file, the totals per currency, each row
// or entry to act on, the counts, what was recorded, the verdict last.
func (r *RailReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "Rail report %s (sha256 %s): %d rows; period %s (UTC)\n\n", printable(r.File.Name), r.File.SHA256, r.Rows, r.period())
	if err := r.writeTotals(w, "LEDGER ENTRIES"); err != nil {
		return err
	}
	if len(r.Items) > 0 {
		tb := newTable([]string{"CATEGORY", "LINE", "TX ID", "STATUS", "DATE", "FILE AMOUNT", "FILE FEE", "LEDGER", "LEDGER AMOUNT",
			"LEDGER FEE", "DETAIL"}, 1, 5, 6, 8, 9)
		for _, it := range r.Items {
			line := ""
			if it.Line > 0 {
				line = strconv.FormatInt(it.Line, 10)
			}
			tb.add(it.Category, line, it.TxID, it.Status, it.Date, moneyText(it.FileAmount), moneyText(it.FileFee), it.LedgerKind,
				moneyText(it.LedgerAmount), moneyText(it.LedgerFee), it.Detail)
		}
		if err := tb.write(w); err != nil {
			return err
		}
		writeItemsTail(w, r.ItemsOmitted)
	}
	c := r.Counts
	counts := fmt.Sprintf("%s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d, %s %d",
		CategoryMatched, c.Matched, CategoryStatusDiffers, c.StatusDiffers, CategoryAmountDiffers, c.AmountDiffers,
		CategoryFeeDiffers, c.FeeDiffers, CategoryDateDiffers, c.DateDiffers, CategoryOutsidePeriod, c.OutsidePeriod,
		CategoryAlreadyReconciled, c.AlreadyReconciled, CategoryMissingInLedger, c.MissingInLedger, CategoryMissingInFile, c.MissingInFile,
		CategoryDuplicateInFile, c.DuplicateInFile, CategoryInvalidRow, c.InvalidRow, CategoryEmptyFile, c.EmptyFile)
	return writeVerdict(w, counts, r.RecordLine(), r.Verdict)
}
