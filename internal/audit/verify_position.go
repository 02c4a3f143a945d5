package audit

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// The bill is the whole position (issue 29, point 2; docs/finance.md). Since
// sql/0022 the writer gives a card's held funds and receivable bill lines
// too, and types each line by postings.BillLineType. The entries booked
// before keep their lines: bill_rules_legacy says, per merchant, the last
// entry booked under the old rules (each line its entry's kind, funding and
// available accounts only), and bill_openings what each held or receivable
// account held then, which its first line continues from.

// CheckFees: per merchant and currency, the FEE lines of the bill sum to
// the fees the journal moved into fee revenue (negated: the lines are the
// merchant's side), over the entries booked under the new rules.
const CheckFees = "fees"

// billPosition is what the bill checks need of 0022's two tables.
type billPosition struct {
	legacy   map[int64]int64 // merchant → last entry under the old rules
	openings map[int64]int64 // account id → its balance when its lines began
}

// legacyEntry reports whether entry seq of merchant was booked under the
// old rules.
func (p *billPosition) legacyEntry(merchant, seq int64) bool {
	last, ok := p.legacy[merchant]
	return ok && seq <= last
}

// billableUnder reports whether a side on an account of type t has a line
// under the rules the entry was booked under.
func billableUnder(t postings.AccountType, legacy bool) bool {
	if legacy {
		return t == postings.AccountFunding || t == postings.AccountCardAvailable
	}
	return t.Billable()
}

// wantKind is the type line l must have: under the old rules its entry's
// kind, else the type of its posting (postings.BillLineType).
func (s *chainStream) wantKind(l billLine, legacy bool) string {
	if legacy {
		return string(s.rec.Kind)
	}
	for i, idx := range s.idx {
		if idx == l.idx {
			return string(postings.BillLineType(&s.rec.Entry, i))
		}
	}
	return string(s.rec.Kind) // no such posting: reported as such by the caller
}

const loadLegacySQL = `select merchant_id, last_seq from bill_rules_legacy where $1::bigint = 0 or merchant_id = $1::bigint`

const loadOpeningsSQL = `select account_id, balance from bill_openings where $1::bigint = 0 or merchant_id = $1::bigint`

// loadBillPosition reads both tables in the verify snapshot.
func loadBillPosition(ctx context.Context, conn *pgx.Conn, merchant int64) (billPosition, error) {
	p := billPosition{}
	var err error
	if p.legacy, err = loadPairs(ctx, conn, loadLegacySQL, merchant); err != nil {
		return p, err
	}
	p.openings, err = loadPairs(ctx, conn, loadOpeningsSQL, merchant)
	return p, err
}

func loadPairs(ctx context.Context, conn *pgx.Conn, q string, merchant int64) (map[int64]int64, error) {
	rows, err := conn.Query(ctx, q, verifySQLMode, merchant)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var k, v int64
		if err := rows.Scan(&k, &v); err != nil {
			return nil, ledger.MapError(err)
		}
		out[k] = v
	}
	return out, ledger.MapError(rows.Err())
}

// feesCheck is the fee identity: type=FEE sums to fee revenue (what fees
// put there; an ADJUSTMENT's correction of it is its own line type). The lines
// are summed over every account of the merchant (an authorization's
// cross-border fee is a FEE line on the card's available balance and its
// counter-line on the held funds, which cancel until the clearing takes the
// fee from the hold), the postings into fee revenue per currency, each
// over the entries past the merchant's old rules. One union of both sides,
// grouped per merchant and currency, with no join for the planner to choose
// (plans_read_test.go): the lines are read through bill_lines' index on the
// merchant, the fees from the fee revenue accounts, each a probe of
// postings_destination_idx (only the fees' postings are read, not the
// journal's), each posting's entry kind by a probe.
var feesCheck = sqlCheck{name: "fees", check: CheckFees, cost: 40, sql: `
		select x.merchant_id, 'm:' || x.merchant_id || ':fee_revenue:' || x.currency,
		       format('the FEE lines sum to %s, the fees into fee revenue to %s (minor units)', -sum(x.line), sum(x.fee))
		from (
		  select b.merchant_id, b.currency, b.amount as line, 0::bigint as fee
		  from bill_lines b
		  left join lateral (select last_seq from bill_rules_legacy g where g.merchant_id = b.merchant_id offset 0) g on true
		  where ($1::bigint = 0 or b.merchant_id = $1) and b.kind = 'FEE' and b.merchant_seq > coalesce(g.last_seq, 0)
		  union all
		  select a.merchant_id, a.currency, 0::bigint, p.amount
		  from accounts a
		  left join lateral (select last_seq from bill_rules_legacy g where g.merchant_id = a.merchant_id offset 0) g on true
		  cross join lateral (select p.merchant_seq, p.amount from postings p
		                      where p.destination_id = a.id and p.merchant_seq > coalesce(g.last_seq, 0) offset 0) p
		  cross join lateral (select kind from entries e
		                      where e.merchant_id = a.merchant_id and e.merchant_seq = p.merchant_seq offset 0) e
		  where ($1::bigint = 0 or a.merchant_id = $1) and a.type = 'fee_revenue' and e.kind <> 'ADJUSTMENT'
		) x
		group by x.merchant_id, x.currency
		having -sum(x.line) <> sum(x.fee)
		order by 1, 2
		limit 1000`}

func init() { verifyChecks = append(verifyChecks, feesCheck) }
