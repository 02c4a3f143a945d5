package ledger

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// sqlCheck is an invariant PostgreSQL folds over a whole table: a query
// returning (merchant, account address, detail) rows, each one a problem,
// with $1 the merchant (0: every merchant).
type sqlCheck struct {
	name  string // for tests and errors
	check string // the Check* constant of its problems
	// cost orders the queue, longest first, so that the connections end
	// together: milliseconds of PostgreSQL on the bench database (a million
	// entries of one posting and one bill line each; EXPLAIN ANALYZE without
	// parallel workers, the best of five on the 2-core bench machine). The
	// checks over accounts and holds cost next to nothing.
	cost int
	sql  string
}

// verifyChecks are the aggregate checks, in the order their problems are
// reported. They run in any order, on any connection in the snapshot.
// The checks that compare balances with postings and the bill with the
// postings (balance, billLines, billSides) are what makes Verify catch a
// changed amount even where the hash chain is recomputed by the tamperer.
var verifyChecks = []sqlCheck{
	// The balances table is the fold of the postings, and every balance
	// obeys the rules of its type.
	//
	// One aggregation over accounts, balances and both sides of every
	// posting, grouped by account, with no join to plan: a join of the
	// folded postings with accounts was planned from a guess of 200 groups
	// (PostgreSQL has no statistics for a union's output) as a nested loop,
	// 30,000 accounts × 15,000 groups, and took 13 s of a 19 s verify on
	// the bench database. Only the problem rows, a few when any, are then
	// probed for their addresses.
	{name: "balance", cost: 700, check: CheckBalance, sql: `
		with folded as (
			select m.account_id, bool_or(m.is_account) as is_account,
			       max(m.balance) as balance, sum(m.delta) as total
			from (
				select id as account_id, true as is_account, null::bigint as balance, 0::bigint as delta
				from accounts where $1 = 0 or merchant_id = $1
				union all
				select account_id, false, balance, 0 from balances where $1 = 0 or merchant_id = $1
				union all
				select source_id, false, null, -amount from postings where $1 = 0 or merchant_id = $1
				union all
				select destination_id, false, null, amount from postings where $1 = 0 or merchant_id = $1
			) m
			group by m.account_id
		), problems as materialized (
			select account_id, balance, total from folded
			where is_account and (balance is null or balance <> total)
		)
		select a.merchant_id, a.address,
		       format('balance %s, the postings sum to %s', coalesce(p.balance::text, 'missing'), p.total)
		from problems p
		cross join lateral (select merchant_id, address from accounts where id = p.account_id offset 0) a
		order by a.address
		limit 1000`},
	{name: "negative", check: CheckNegative, sql: `
		select a.merchant_id, a.address, format('constrained balance %s is below zero', b.balance)
		from balances b join accounts a on a.id = b.account_id
		where ($1 = 0 or a.merchant_id = $1)
		  and (b.balance < 0 and (b.constrained or a.type in ('funding', 'card_available', 'card_held', 'remit_in_flight')))
		limit 1000`},
	// The held balance of every issued card is the sum of its open holds
	// (accounts of cards the card domain never issued, which only direct
	// Append callers make, have no hold rows to compare with), and an
	// authorization holds exactly while it is open: the hold table and the
	// journal are checked against each other.
	{name: "holds", check: CheckHolds, sql: `
		with holds as (
			select card_no, sum(held) as held from authorizations
			where ($1 = 0 or merchant_id = $1) and status = 'OPEN' group by card_no
		)
		select a.merchant_id, a.address, format('held balance %s, open holds sum to %s', b.balance, coalesce(h.held, 0))
		from accounts a join balances b on b.account_id = a.id
		left join holds h on h.card_no = a.card_no
		where ($1 = 0 or a.merchant_id = $1) and a.type = 'card_held' and b.balance <> coalesce(h.held, 0)
		  and exists (select 1 from cards c where c.card_no = a.card_no)
		union all
		select h.merchant_id, 'm:' || h.merchant_id || ':card_held:' || h.currency || ':' || h.card_no,
		       'open holds without a held balance'
		from authorizations h
		where ($1 = 0 or h.merchant_id = $1) and h.status = 'OPEN'
		  and not exists (select 1 from accounts a where a.card_no = h.card_no and a.type = 'card_held')
		limit 1000`},
	{name: "receivable", check: CheckNegative, sql: `
		select a.merchant_id, a.address, format('a receivable is what a card owes, never a credit: %s', b.balance)
		from balances b join accounts a on a.id = b.account_id
		where ($1 = 0 or a.merchant_id = $1) and a.type = 'card_receivable' and b.balance > 0
		limit 1000`},
	{name: "currency", check: CheckCurrency, sql: `
		select a.merchant_id, '', format('balances in %s sum to %s', a.currency, sum(b.balance))
		from balances b join accounts a on a.id = b.account_id
		where $1 = 0 or a.merchant_id = $1
		group by a.merchant_id, a.currency
		having sum(b.balance) <> 0
		limit 1000`},
	// The bill lines are exactly the movements of billable accounts (each
	// line a side of a posting, each billable side a line), gapless, with
	// balances after that follow from the amounts.
	{name: "billLines", cost: 1100, check: CheckBill, sql: `
		select b.merchant_id, '', format('bill line %s (entry %s) has no matching posting side', b.bill_seq, b.merchant_seq)
		from bill_lines b
		left join postings p on p.merchant_id = b.merchant_id and p.merchant_seq = b.merchant_seq and p.idx = b.posting_idx
		left join entries e on e.merchant_id = b.merchant_id and e.merchant_seq = b.merchant_seq
		where ($1 = 0 or b.merchant_id = $1)
		  and (p.merchant_id is null
		       or not ((b.account_id = p.source_id and b.amount = -p.amount) or (b.account_id = p.destination_id and b.amount = p.amount))
		       or b.currency <> p.currency or e.kind <> b.kind or e.created_at <> b.created_at)
		limit 1000`},
	// The anti-join is planned inside a materialized CTE, without the
	// limit: with "limit 1000" on it PostgreSQL expects to stop early and
	// probes an index per posting side (2 million nested-loop probes, 5.5 s
	// on the bench database with 30,000 accounts), where hashing takes 2.2 s.
	{name: "billSides", cost: 2000, check: CheckBill, sql: `
		with sides as (
			select p.merchant_id, p.merchant_seq, p.idx, p.source_id as account_id from postings p where $1 = 0 or p.merchant_id = $1
			union all
			select p.merchant_id, p.merchant_seq, p.idx, p.destination_id from postings p where $1 = 0 or p.merchant_id = $1
		), problems as materialized (
			select s.merchant_id, a.address, s.merchant_seq, s.idx
			from sides s
			join accounts a on a.id = s.account_id and a.type in ('funding', 'card_available')
			left join bill_lines b on b.merchant_id = s.merchant_id and b.merchant_seq = s.merchant_seq
			                      and b.posting_idx = s.idx and b.account_id = s.account_id
			where b.merchant_id is null
		)
		select merchant_id, address, format('entry %s posting %s has no bill line', merchant_seq, idx)
		from problems
		limit 1000`},
	{name: "billSeq", cost: 200, check: CheckBill, sql: `
		select h.merchant_id, '', format('bill sequence: %s lines, highest %s, head says %s', count(b.bill_seq), coalesce(max(b.bill_seq), 0), h.last_bill_seq)
		from ledger_heads h left join bill_lines b on b.merchant_id = h.merchant_id
		where $1 = 0 or h.merchant_id = $1
		group by h.merchant_id, h.last_bill_seq
		having count(b.bill_seq) <> coalesce(max(b.bill_seq), 0) or coalesce(max(b.bill_seq), 0) <> h.last_bill_seq
		limit 1000`},
	// Each bill line's balance after is the one before plus its amount, and
	// the last one is the account's balance. One window (lag for the line
	// before, lead for the last line: the line with no next one in bill_seq
	// order is the one the former row_number() over the descending order
	// numbered 1) instead of two: one sort of the bill lines, not two, of
	// which the second spilled to disk (1.7 s -> 0.9 s).
	{name: "billChain", cost: 900, check: CheckBillChain, sql: `
		with chained as (
			select b.merchant_id, b.account_id, b.bill_seq, b.amount, b.balance_after,
			       lag(b.balance_after, 1, 0::bigint) over w as before,
			       lead(b.bill_seq) over w is null as last
			from bill_lines b
			where $1 = 0 or b.merchant_id = $1
			window w as (partition by b.account_id order by b.bill_seq)
		)
		select c.merchant_id, a.address,
		       case when c.before + c.amount <> c.balance_after
		            then format('bill line %s: %s + %s <> balance after %s', c.bill_seq, c.before, c.amount, c.balance_after)
		            else format('last bill line %s says %s, the balance is %s', c.bill_seq, c.balance_after, bl.balance) end
		from chained c
		join accounts a on a.id = c.account_id
		join balances bl on bl.account_id = c.account_id
		where c.before + c.amount <> c.balance_after or (c.last and c.balance_after <> bl.balance)
		limit 1000`},
}

// verifySQLMode sends the checks with the merchant written into the text
// by pgx (the simple protocol), whatever the pool's default: PostgreSQL
// then plans each with the merchant as a constant, so that "$1 = 0" folds
// away. As a parameter of a prepared statement it would get a generic plan
// (db.go sets plan_cache_mode = force_generic_plan), which cannot use the
// merchant to narrow anything.
const verifySQLMode = pgx.QueryExecModeSimpleProtocol

// run executes the check on conn and collects its problems.
func (c *sqlCheck) run(ctx context.Context, conn *pgx.Conn, merchant int64) (problemList, error) {
	var ps problemList
	rows, err := conn.Query(ctx, c.sql, verifySQLMode, merchant)
	if err != nil {
		return ps, mapError(err)
	}
	defer rows.Close()
	for rows.Next() {
		var p Problem
		if err := rows.Scan(&p.Merchant, &p.Account, &p.Detail); err != nil {
			return ps, mapError(err)
		}
		p.Check = c.check
		ps.add(p)
	}
	return ps, mapError(rows.Err())
}
