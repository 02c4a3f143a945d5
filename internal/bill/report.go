package bill

import (
	"context"
	"time"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// The balance report (issue 29, point 3; docs/finance.md, "Balance
// report"): for each currency and account class of a merchant, the balance
// at the start of a period, the period's movements by reporting category,
// and the balance at its end, with opening + Σ categories = closing.
//
// Where each class's movements come from. Available funding and card
// balances are the bill: their lines, by line type, so that the report adds
// up to exactly what the bill export lists. Held funds and receivables are
// not billable accounts; their movements are read from the journal's
// postings, each signed for the account (credit +, debit −), by entry kind
// for a hold and as RECEIVABLE (a debit: the card owes more) or
// RECEIVABLE_RECOVERY (a credit: it owes less) for a receivable. The
// opening is the fold of every movement before the period (an independent
// sum, not a balance_after copied from a line), so the tie to the statement
// and to the balances is a check, not a tautology (report_test.go).
//
// Everything is one statement, so one snapshot: a report of a period that
// reaches the present still adds up while the merchant is being written to.

// AccountClass is a group of a merchant's accounts in one currency.
type AccountClass string

// The account classes, in report order.
const (
	ClassFunding    AccountClass = "funding"    // the funding account: money free to use
	ClassCard       AccountClass = "card"       // every card's available balance
	ClassHeld       AccountClass = "held"       // every card's open holds
	ClassReceivable AccountClass = "receivable" // what cards owe (zero or negative)
)

// AccountClasses lists the classes in report order.
func AccountClasses() []AccountClass {
	return []AccountClass{ClassFunding, ClassCard, ClassHeld, ClassReceivable}
}

// ReportRow is one currency and account class over the period. Amounts are
// signed minor units of Currency.
type ReportRow struct {
	Currency string
	Class    AccountClass
	Opening  int64
	// Activity is the period's movements by category; every category is
	// present, 0 when nothing moved.
	Activity map[Category]int64
	// Movements counts the bill lines (funding, card) or postings (held,
	// receivable) of the period.
	Movements int64
	Closing   int64
}

// BalanceReport is the report of one merchant over [From, To).
type BalanceReport struct {
	From, To time.Time
	// Rows are by currency, then class in AccountClasses order; each
	// currency the merchant has an account of these classes in has all four
	// rows.
	Rows []ReportRow
}

// Totals is the report summed over the classes of each currency (the
// merchant's whole position in it), in currency order; Class is empty.
func (r *BalanceReport) Totals() []ReportRow {
	var out []ReportRow
	for _, row := range r.Rows {
		if len(out) == 0 || out[len(out)-1].Currency != row.Currency {
			out = append(out, ReportRow{Currency: row.Currency, Activity: zeroActivity()})
		}
		t := &out[len(out)-1]
		t.Opening += row.Opening
		t.Closing += row.Closing
		t.Movements += row.Movements
		for c, v := range row.Activity {
			t.Activity[c] += v
		}
	}
	return out
}

func zeroActivity() map[Category]int64 {
	m := make(map[Category]int64, len(Categories()))
	for _, c := range Categories() {
		m[c] = 0
	}
	return m
}

// BalanceReport reads the report of merchant over [from, to), of one
// currency, or of all when currency is "".
func (s *Service) BalanceReport(ctx context.Context, merchant int64, from, to time.Time, currency string) (*BalanceReport, error) {
	if !from.Before(to) {
		return nil, postings.FieldErrorf("endDate", "must not be before startDate")
	}
	conn, err := s.l.ReadConn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var rows []reportReadRow
	err = conn.NewRaw(balanceReportSQL, merchant, from.UTC(), to.UTC(), currency).Scan(ctx, &rows)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	return buildReport(from, to, rows)
}

// reportReadRow is the sum of one line type's movements of one currency
// and class, before and in the period.
type reportReadRow struct {
	Class    string `bun:"class"`
	Currency string `bun:"currency"`
	LineType string `bun:"line_type"`
	Before   int64  `bun:"before"`
	Moved    int64  `bun:"moved"`
	Lines    int64  `bun:"lines"`
}

// buildReport folds the read rows into the report. The statement orders
// them by currency and class. A line type the category table does not know
// is a bug (TestEveryLineTypeHasACategory), refused rather than dropped:
// dropping it would break opening + activity = closing silently.
func buildReport(from, to time.Time, rows []reportReadRow) (*BalanceReport, error) {
	rep := &BalanceReport{From: from, To: to}
	index := map[[2]string]int{}
	for _, r := range rows {
		if _, ok := index[[2]string{r.Currency, ""}]; !ok {
			index[[2]string{r.Currency, ""}] = len(rep.Rows)
			for _, cl := range AccountClasses() {
				index[[2]string{r.Currency, string(cl)}] = len(rep.Rows)
				rep.Rows = append(rep.Rows, ReportRow{Currency: r.Currency, Class: cl, Activity: zeroActivity()})
			}
		}
		i, ok := index[[2]string{r.Currency, r.Class}]
		if !ok {
			return nil, postings.Errorf(postings.EINTERNAL, "balance report: unknown account class %q", r.Class)
		}
		if r.LineType == "" { // an account's zero row
			continue
		}
		cat, ok := CategoryOf(r.LineType)
		if !ok {
			return nil, postings.Errorf(postings.EINTERNAL, "balance report: bill line type %q has no reporting category", r.LineType)
		}
		row := &rep.Rows[i]
		row.Opening += r.Before
		row.Activity[cat] += r.Moved
		row.Movements += r.Lines
		row.Closing += r.Before + r.Moved
	}
	return rep, nil
}

// balanceReportSQL is BalanceReport's statement (?0 the merchant, ?1 from,
// ?2 to, ?3 the currency, or empty for all): the merchant's accounts of the four
// classes (a zero row each, so that a currency with no movement still has
// its rows), its bill lines of funding and card accounts by line type, and
// the postings of its holds and receivables, summed per currency, class and
// line type before and in the period. Each branch is an index range: the
// bill by bill_lines_created_idx, the accounts by accounts_merchant_idx,
// their postings by postings_source_idx and postings_destination_idx.
const balanceReportSQL = `
	select m.class, m.currency, m.line_type,
	       coalesce(sum(m.amount) filter (where m.created_at < ?1), 0)::bigint as before,
	       coalesce(sum(m.amount) filter (where m.created_at >= ?1), 0)::bigint as moved,
	       count(*) filter (where m.created_at >= ?1) as lines
	from (
		select case a.type when 'funding' then 'funding' when 'card_available' then 'card'
		                   when 'card_held' then 'held' else 'receivable' end as class,
		       a.currency, '' as line_type, null::timestamptz as created_at, 0::bigint as amount
		from accounts a
		where a.merchant_id = ?0 and a.type in ('funding', 'card_available', 'card_held', 'card_receivable')
		union all
		select case a.type when 'funding' then 'funding' else 'card' end, b.currency, b.kind, b.created_at, b.amount
		from bill_lines b
		cross join lateral (select type from accounts where id = b.account_id offset 0) a
		where b.merchant_id = ?0 and b.created_at < ?2 and a.type in ('funding', 'card_available')
		union all
		select case a.type when 'card_held' then 'held' else 'receivable' end, a.currency,
		       case a.type when 'card_held' then e.kind else 'RECEIVABLE_RECOVERY' end, e.created_at, p.amount
		from accounts a
		join postings p on p.destination_id = a.id
		join entries e on e.merchant_id = p.merchant_id and e.merchant_seq = p.merchant_seq
		where a.merchant_id = ?0 and a.type in ('card_held', 'card_receivable') and e.created_at < ?2
		union all
		select case a.type when 'card_held' then 'held' else 'receivable' end, a.currency,
		       case a.type when 'card_held' then e.kind else 'RECEIVABLE' end, e.created_at, -p.amount
		from accounts a
		join postings p on p.source_id = a.id
		join entries e on e.merchant_id = p.merchant_id and e.merchant_seq = p.merchant_seq
		where a.merchant_id = ?0 and a.type in ('card_held', 'card_receivable') and e.created_at < ?2
	) m
	where ?3 = '' or m.currency = ?3
	group by m.currency, m.class, m.line_type
	order by m.currency, array_position(array['funding', 'card', 'held', 'receivable'], m.class), m.line_type`
