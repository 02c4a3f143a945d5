package reconcile

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/gateway/postings"
)

// The parts every file reconciliation's report (settlement, bank, rail,
// refund) is made of, written once: the file's side (rows, period,
// totals), the items and what was recorded, the counts by category and
// the text report's skeleton. What differs (the columns, the categories,
// how a row is matched) stays in each report's own files. The parts are
// embedded, so that the reports' JSON keeps its fields and their order.

// fileSide is a report's rows, period and totals per currency (JSON:
// rows, from, to, totals).
type fileSide struct {
	Rows int64  `json:"rows"` // data rows read, the header excluded
	From string `json:"from"` // the period reconciled (YYYY-MM-DD, UTC), first day
	To   string `json:"to"`   // and last day, included
	currencyTotals
}

func newFileSide(p Period) fileSide {
	return fileSide{From: p.From.Format(time.DateOnly), To: p.To.Format(time.DateOnly), currencyTotals: newCurrencyTotals()}
}

// period is the period as a report names it.
func (s *fileSide) period() string { return periodText(s.From, s.To) }

// fileRecord is a report's end: the items that need a person (at most
// settlementItemsMax listed, the rest counted in ItemsOmitted), the run
// that accounts for the file's entries (made now, or by an earlier
// reconciliation of the same file: AlreadyRecorded; nil when nothing was
// recorded), the verdict, and the matched rows a run records.
type fileRecord[I any] struct {
	Items           []I     `json:"items"`
	ItemsOmitted    int64   `json:"itemsOmitted"`
	Recorded        *Run    `json:"recorded"`
	AlreadyRecorded bool    `json:"alreadyRecorded"`
	Verdict         Verdict `json:"verdict"`

	matched []matchedItem // what a run records
}

func newFileRecord[I any]() fileRecord[I] { return fileRecord[I]{Items: []I{}} }

// matchedItem is a matched line or row, kept for the run that records it
// (and, should another run take it meanwhile, for its amount and id).
type matchedItem struct {
	RecordedItem
	amount postings.Money
	id     string // the row's key where its taken item names it (the settlement file's auth id)
}

// categoryCount is one category's counter in a report's counts; a
// report's list starts with matched and goes in the order the text
// report prints them.
type categoryCount struct {
	name string
	n    *int64
}

// toAct is every count but matched.
func toAct(counts []categoryCount) int64 {
	var n int64
	for _, c := range counts[1:] {
		n += *c.n
	}
	return n
}

// countsLine is the text report's line of counts: "matched 3, amount_differs 0, …".
func countsLine(counts []categoryCount) string {
	parts := make([]string, len(counts))
	for i, c := range counts {
		parts[i] = fmt.Sprintf("%s %d", c.name, *c.n)
	}
	return strings.Join(parts, ", ")
}

// add counts an item under its category (an unknown one, or matched, is a
// bug) and lists it while there is room.
func (l *fileRecord[I]) add(counts []categoryCount, category string, it I) {
	for _, c := range counts[1:] {
		if c.name == category {
			*c.n++
			listItem(&l.Items, &l.ItemsOmitted, it)
			return
		}
	}
	panic("reconcile: unknown category " + category)
}

// matchedRow counts a row that matched (matched: the report's counter)
// and keeps it for the run.
func (l *fileRecord[I]) matchedRow(side *fileSide, matched *int64, it matchedItem) {
	*matched++
	side.sum(it.amount).addMatched(it.amount.Minor)
	l.matched = append(l.matched, it)
}

// record records a file that matched completely as a run of kind (nothing
// without records; the earlier run when it recorded this very file).
// An entry another run recorded meanwhile is no longer matched: it leaves
// the matched count and totals and is handed to taken, with the claim's
// detail, to be listed as already_reconciled; nothing is recorded then.
func (l *fileRecord[I]) record(ctx context.Context, r *fileRun, side *fileSide, matched *int64,
	kind string, sum []byte, name, actor string, taken func(it matchedItem, detail string)) error {
	if r.rec == nil {
		return nil
	}
	items := make([]RecordedItem, len(l.matched))
	for i, mr := range l.matched {
		items[i] = mr.RecordedItem
	}
	run := Run{Kind: kind, FileName: name, From: side.From, To: side.To, Actor: actor, Rows: side.Rows}
	recorded, already, claims, err := recordMatched(ctx, r.rec, r.sameRun, run, sum, items)
	if err != nil {
		return err
	}
	l.Recorded, l.AlreadyRecorded = recorded, already
	for _, it := range l.matched {
		if c, ok := claims[it.EntryID]; ok {
			*matched--
			side.totals[it.amount.Currency.Code].subMatched(it.amount.Minor)
			taken(it, claimedDetail(c))
		}
	}
	side.finishTotals()
	return nil
}

// reportText is what a report's text says, in its order: the file, the
// totals per currency (file against ledger; ledgerItems names the
// ledger's column), each item to act on (items nil: none), the counts,
// what was recorded, and the verdict last.
type reportText struct {
	head        string
	ledgerItems string
	items       *table
	omitted     int64
	counts      []categoryCount
	recorded    string
	verdict     Verdict
}

func (t reportText) write(w io.Writer, side *fileSide) error {
	fmt.Fprintf(w, "%s\n\n", t.head)
	if err := side.writeTotals(w, t.ledgerItems); err != nil {
		return err
	}
	if t.items != nil {
		if err := t.items.write(w); err != nil {
			return err
		}
		writeItemsTail(w, t.omitted)
	}
	return writeVerdict(w, countsLine(t.counts), t.recorded, t.verdict)
}

// itemsTable is a report's table of items, or nil when it lists none.
func itemsTable[I any](items []I, header []string, right []int, cells func(*I) []string) *table {
	if len(items) == 0 {
		return nil
	}
	tb := newTable(header, right...)
	for i := range items {
		tb.add(cells(&items[i])...)
	}
	return tb
}

// numberCell is a line or sequence number as a cell: empty for 0 (none).
func numberCell(n int64) string {
	if n <= 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

// eachInPeriod pages through the ledger's side of the period, in
// (CreatedAt, EntryID) order, settlementBatch at a time (read: the
// source's page; cursor: an entry's place), handing each entry to each.
// It returns how many there were.
func eachInPeriod[E any](ctx context.Context, p Period, read func(ctx context.Context, from, to time.Time, after SettlementCursor,
	limit int) ([]E, error), cursor func(*E) SettlementCursor, each func(*E)) (int64, error) {
	var after SettlementCursor
	var n int64
	for {
		page, err := read(ctx, p.From, p.end(), after, settlementBatch)
		if err != nil {
			return n, err
		}
		for i := range page {
			n++
			each(&page[i])
		}
		if len(page) < settlementBatch {
			return n, nil
		}
		after = cursor(&page[len(page)-1])
	}
}

// emptyFileDetail says that a file without rows (file: "file has no
// rows") meets n ledger items of the period.
func emptyFileDetail(file string, n int64, items string, p Period) string {
	return fmt.Sprintf("the %s, but the ledger has %d %s in the period %s (each missing_in_file): a truncated export?", file, n, items, p)
}
