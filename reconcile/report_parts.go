package reconcile

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/gateway/postings"
)

// What every file reconciliation's report (settlement, bank, rail,
// refund) is made of, written once (fileReport): the file's side (rows,
// period, totals), the counts by category, the items, what was recorded,
// the verdict and the text report's skeleton. What differs (the columns,
// the categories, the words, how a row is matched) stays in each
// report's own files: its counts' categories, its reportSpec, its
// WriteText. fileReport is embedded, so that the reports' JSON keeps its
// fields and their order.

// fileReport is a report past its file's name: the rows read, the
// period, the totals per currency, the counts by category (C), the items
// that need a person (I; at most settlementItemsMax listed, the rest
// counted in ItemsOmitted), the run that accounts for the file's entries
// (made now, or by an earlier reconciliation of the same file:
// AlreadyRecorded; nil when nothing was recorded) and the verdict — in
// that order in JSON — with the matched rows a run records and the spec
// of its kind of report.
type fileReport[I reportItem, C any] struct {
	Rows int64  `json:"rows"` // data rows read, the header excluded
	From string `json:"from"` // the period reconciled (YYYY-MM-DD, UTC), first day
	To   string `json:"to"`   // and last day, included
	currencyTotals
	Counts          C       `json:"counts"`
	Items           []I     `json:"items"`
	ItemsOmitted    int64   `json:"itemsOmitted"`
	Recorded        *Run    `json:"recorded"`
	AlreadyRecorded bool    `json:"alreadyRecorded"`
	Verdict         Verdict `json:"verdict"`

	matched []matchedItem // what a run records
	spec    *reportSpec[I]
}

// reportItem is an item of a report: its category and line order it.
type reportItem interface {
	key() (category string, line int64)
}

// reportSpec is what tells one kind of report from another beyond its
// columns: the run's kind, how the verdict names the file ("file",
// "statement", "report") and the ledger's side ("clearings", "deposits",
// …; none: what the ledger has none of, "" for "none of the "+items), the
// items' order by category, and the item a matched row becomes when
// another run took its entry meanwhile.
type reportSpec[I any] struct {
	kind, file, items, none string
	rank                    map[string]int
	taken                   func(it matchedItem, detail string) I
}

func newFileReport[I reportItem, C any](p Period, spec *reportSpec[I]) fileReport[I, C] {
	return fileReport[I, C]{From: p.From.Format(time.DateOnly), To: p.To.Format(time.DateOnly), currencyTotals: newCurrencyTotals(),
		Items: []I{}, spec: spec}
}

// period is the period as a report names it.
func (r *fileReport[I, C]) period() string { return periodText(r.From, r.To) }

func (r *fileReport[I, C]) counts() []categoryCount { return categoriesOf(&r.Counts) }

// OK reports whether every row matched and the ledger lacks nothing.
func (r *fileReport[I, C]) OK() bool { return toAct(r.counts()) == 0 }

// add counts an item under its category (an unknown one, or matched, is a
// bug) and lists it while there is room.
func (r *fileReport[I, C]) add(it I) {
	category, _ := it.key()
	n := r.counter(category)
	if n == nil || category == CategoryMatched {
		panic("reconcile: unknown category " + category)
	}
	*n++
	listItem(&r.Items, &r.ItemsOmitted, it)
}

// counter is a category's counter (nil: the report has no such category).
func (r *fileReport[I, C]) counter(category string) *int64 {
	for _, c := range r.counts() {
		if c.name == category {
			return c.n
		}
	}
	return nil
}

// sortItems orders the items by their category's rank (the file as a
// whole, money counted twice or wrongly, what is missing, then the file's
// own faults), then by the file's line (the ledger's order for
// missing_in_file).
func (r *fileReport[I, C]) sortItems() {
	sortByRank(r.Items, r.spec.rank, func(it *I) (string, int64) { return (*it).key() })
}

// finish gives the verdict: discrepancies when any row or ledger item
// needs a person, else matched, saying of what.
func (r *fileReport[I, C]) finish() {
	none := r.spec.none
	if none == "" {
		none = "none of the " + r.spec.items
	}
	if toAct := toAct(r.counts()); toAct > 0 {
		r.Verdict = discrepanciesVerdict(toAct, r.Rows+*r.counter(CategoryMissingInFile)+*r.counter(CategoryEmptyFile))
		return
	}
	if r.Rows == 0 {
		r.Verdict = matchedVerdict(fmt.Sprintf("the %s and the ledger both have no %s in the period %s", r.spec.file, r.spec.items, r.period()))
		return
	}
	r.Verdict = matchedVerdict(fmt.Sprintf("every row matched and the ledger has %s of the period %s that the %s lacks",
		none, r.period(), r.spec.file))
}

// RecordLine says what was recorded, for the text report and the console.
func (r *fileReport[I, C]) RecordLine() string {
	var items string
	if r.spec != nil { // nil: a report not made by a reconciliation (decoded)
		items = r.spec.items
	}
	return recordedText(r.Recorded, r.AlreadyRecorded, r.OK(), items)
}

func (r *fileReport[I, C]) rowsRead() *int64 { return &r.Rows }

// startRun finds the run that recorded this very file before, if any
// (without records, none).
func (r *fileReport[I, C]) startRun(ctx context.Context, fr *fileRun, sum []byte) error {
	if fr.rec == nil {
		return nil
	}
	var err error
	fr.sameRun, err = fr.rec.RunByFile(ctx, r.spec.kind, sum)
	return err
}

// addLedger counts an entry of the period in the ledger's side of the
// totals (amount nil: its currency is not one the gateway knows, so no
// total can hold it).
func (r *fileReport[I, C]) addLedger(amount *postings.Money) {
	if amount != nil {
		r.sum(*amount).addLedger(amount.Minor)
	}
}

// matchedRow counts a row that matched and keeps it for the run.
func (r *fileReport[I, C]) matchedRow(it matchedItem) {
	*r.counter(CategoryMatched)++
	r.sum(it.amount).addMatched(it.amount.Minor)
	r.matched = append(r.matched, it)
}

// record records a file that matched completely as a run of the spec's
// kind (nothing without records; the earlier run when it recorded this
// very file). An entry another run recorded meanwhile is no longer
// matched: it leaves the matched count and totals and is listed as
// already_reconciled (the spec's taken item); nothing is recorded then.
func (r *fileReport[I, C]) record(ctx context.Context, fr *fileRun, sum []byte, name, actor string) error {
	if fr.rec == nil {
		return nil
	}
	items := make([]RecordedItem, len(r.matched))
	for i, mr := range r.matched {
		items[i] = mr.RecordedItem
	}
	run := Run{Kind: r.spec.kind, FileName: name, From: r.From, To: r.To, Actor: actor, Rows: r.Rows}
	recorded, already, claims, err := recordMatched(ctx, fr.rec, fr.sameRun, run, sum, items)
	if err != nil {
		return err
	}
	r.Recorded, r.AlreadyRecorded = recorded, already
	for _, it := range r.matched {
		if c, ok := claims[it.EntryID]; ok {
			*r.counter(CategoryMatched)--
			r.totals[it.amount.Currency.Code].subMatched(it.amount.Minor)
			r.add(r.spec.taken(it, claimedDetail(c)))
		}
	}
	r.finishTotals()
	return nil
}

// writeText prints the report for a person: head (the file), the totals
// per currency, file against ledger (ledgerItems names the ledger's
// column), each item to act on (its cells under header; right: the
// columns set to the right), the counts, what was recorded, the verdict
// last.
func (r *fileReport[I, C]) writeText(w io.Writer, head, ledgerItems string, header []string, right []int, cells func(*I) []string) error {
	fmt.Fprintf(w, "%s\n\n", head)
	if err := r.writeTotals(w, ledgerItems); err != nil {
		return err
	}
	if len(r.Items) > 0 {
		tb := newTable(header, right...)
		for i := range r.Items {
			tb.add(cells(&r.Items[i])...)
		}
		if err := tb.write(w); err != nil {
			return err
		}
		writeItemsTail(w, r.ItemsOmitted)
	}
	return writeVerdict(w, countsLine(r.counts()), r.RecordLine(), r.Verdict)
}

// matchedItem is a matched line or row, kept for the run that records it
// (and, should another run take it meanwhile, for its amount and id).
type matchedItem struct {
	RecordedItem
	amount postings.Money
	id     string // the row's key where its taken item names it (the settlement file's auth id)
}

// categoryCount is one category's counter in a report's counts.
type categoryCount struct {
	name string
	n    *int64
}

// categoriesOf lists the counters of a report's counts (counts: a pointer
// to a struct of int64 fields) under their JSON names, which are the
// categories, in the struct's order, which is the text report's: so that
// the JSON, the text and the counting cannot disagree on a category.
func categoriesOf(counts any) []categoryCount {
	v := reflect.ValueOf(counts).Elem()
	out := make([]categoryCount, v.NumField())
	for i := range out {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		out[i] = categoryCount{name, v.Field(i).Addr().Interface().(*int64)}
	}
	return out
}

// toAct is every count but matched.
func toAct(counts []categoryCount) int64 {
	var n int64
	for _, c := range counts {
		if c.name != CategoryMatched {
			n += *c.n
		}
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

// ledgerSide pages through the ledger's side of the period
// (eachInPeriod), handing each entry to each. A file without rows while
// the ledger has entries is empty_file too: the item empty makes, its
// detail naming the file as file ("file has no rows").
func ledgerSide[I reportItem, C, E any](ctx context.Context, r *fileReport[I, C], p Period, read func(ctx context.Context, from,
	to time.Time, after SettlementCursor, limit int) ([]E, error), cursor func(*E) SettlementCursor, each func(*E), file string,
	empty func(detail string) I) error {
	n, err := eachInPeriod(ctx, p, read, cursor, each)
	if err != nil || r.Rows > 0 || n == 0 {
		return err
	}
	r.add(empty(fmt.Sprintf("the %s, but the ledger has %d %s in the period %s (each missing_in_file): a truncated export?",
		file, n, r.spec.items, p)))
	return nil
}
