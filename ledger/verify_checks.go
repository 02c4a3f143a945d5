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
	// One aggregation over accounts (each with its balance, a probe of
	// balances_pkey) and both sides of every posting, grouped by account,
	// with no join to plan: a join of the folded postings with accounts was
	// planned from a guess of 200 groups (PostgreSQL has no statistics for a
	// union's output) as a nested loop, 30,000 accounts × 15,000 groups, and
	// took 13 s of a 19 s verify on the bench database. Only the problem
	// rows, a few when any, are then probed for their addresses.
	{name: "balance", cost: 700, check: CheckBalance, sql: `
		with folded as (
			select m.account_id, bool_or(m.is_account) as is_account,
			       max(m.balance) as balance, bool_or(m.has_balance) as has_balance, sum(m.delta) as total
			from (
				select a.id as account_id, true as is_account, b.balance, b.balance is not null as has_balance, 0::bigint as delta
				from accounts a
				left join lateral (select balance from balances where account_id = a.id offset 0) b on true
				where $1 = 0 or a.merchant_id = $1
				union all
				select source_id, false, null, false, -amount from postings where $1 = 0 or merchant_id = $1
				union all
				select destination_id, false, null, false, amount from postings where $1 = 0 or merchant_id = $1
			) m
			group by m.account_id
		), problems as materialized (
			select account_id, balance, total from folded
			where is_account and (not has_balance or balance <> total)
		)
		select a.merchant_id, a.address,
		       format('balance %s, the postings sum to %s', coalesce(p.balance::text, 'missing'), p.total)
		from problems p
		cross join lateral (select merchant_id, address from accounts where id = p.account_id offset 0) a
		order by a.address
		limit 1000`},
	// The next checks read each account of the merchant (all accounts for
	// every merchant) and probe its balance: one probe of balances_pkey per
	// account, whatever the statistics.
	{name: "negative", check: CheckNegative, sql: `
		select a.merchant_id, a.address, format('constrained balance %s is below zero', b.balance)
		from accounts a
		cross join lateral (select balance, constrained from balances where account_id = a.id offset 0) b
		where ($1 = 0 or a.merchant_id = $1)
		  and (b.balance < 0 and (b.constrained or a.type in ('funding', 'card_available', 'card_held', 'remit_in_flight')))
		limit 1000`},
	// The held balance of every issued card is the sum of its open holds,
	// and an authorization holds exactly while it is open: the hold table
	// and the journal are checked against each other. Each card of the
	// merchant probes its held account (accounts_card_idx), that account's
	// balance and its authorizations (authorizations_card_idx; the status
	// is filtered outside the probe, or the planner may prefer reading the
	// whole partial index of open authorizations, small in a young
	// database).
	// (Accounts of cards the card domain never issued, which only direct
	// Append callers make, have no hold rows to compare with.)
	{name: "holds", check: CheckHolds, sql: `
		select c.merchant_id,
		       coalesce(a.address, 'm:' || c.merchant_id || ':card_held:' || c.currency || ':' || c.card_no),
		       case when a.id is null then 'open holds without a held balance'
		            else format('held balance %s, open holds sum to %s', b.balance, h.held) end
		from cards c
		left join lateral (select id, address from accounts
		                   where card_no = c.card_no and type = 'card_held' offset 0) a on true
		left join lateral (select balance from balances where account_id = a.id offset 0) b on true
		cross join lateral (select coalesce(sum(held) filter (where status = 'OPEN'), 0) as held,
		                           count(*) filter (where status = 'OPEN') as n
		                    from (select held, status from authorizations where card_no = c.card_no offset 0) x) h
		where ($1 = 0 or c.merchant_id = $1)
		  and ((a.id is null and h.n > 0) or (a.id is not null and coalesce(b.balance, 0) <> h.held))
		limit 1000`},
	{name: "receivable", check: CheckNegative, sql: `
		select a.merchant_id, a.address, format('a receivable is what a card owes, never a credit: %s', b.balance)
		from accounts a
		cross join lateral (select balance from balances where account_id = a.id offset 0) b
		where ($1 = 0 or a.merchant_id = $1) and a.type = 'card_receivable' and b.balance > 0
		limit 1000`},
	{name: "currency", check: CheckCurrency, sql: `
		select a.merchant_id, '', format('balances in %s sum to %s', a.currency, sum(b.balance))
		from accounts a
		cross join lateral (select balance from balances where account_id = a.id offset 0) b
		where $1 = 0 or a.merchant_id = $1
		group by a.merchant_id, a.currency
		having sum(b.balance) <> 0
		limit 1000`},
	// The bill lines are exactly the movements of billable accounts (each
	// line a side of a posting, each billable side a line), gapless, with
	// balances after that follow from the amounts.
	//
	// Each line probes its posting (postings_pkey, a lateral subquery kept
	// apart by "offset 0"): the line must be one side of it, with the
	// side's signed amount and currency. Its kind and time are compared
	// with its entry's by one aggregation over the entries and the lines,
	// grouped by entry, with no join. Written as joins, the plan came from
	// the statistics: with statistics from when the tables were small,
	// PostgreSQL rescanned the merchant's entries for every line (a nested
	// loop over a materialised scan), seconds for ten thousand lines
	// (issue 17). A second probe per line, of entries_pkey, doubled the
	// check's time on 600,000 lines; the grouping costs a third of that.
	{name: "billLines", cost: 1100, check: CheckBill, sql: `
		with times as materialized (
			select m.merchant_id, m.merchant_seq
			from (
				select merchant_id, merchant_seq, true as is_entry, kind, created_at
				from entries where $1 = 0 or merchant_id = $1
				union all
				select merchant_id, merchant_seq, false, kind, created_at
				from bill_lines where $1 = 0 or merchant_id = $1
			) m
			group by m.merchant_id, m.merchant_seq
			having not bool_or(m.is_entry) or min(m.kind) <> max(m.kind) or min(m.created_at) <> max(m.created_at)
		)
		(select b.merchant_id, '', format('bill line %s (entry %s) has no matching posting side', b.bill_seq, b.merchant_seq)
		 from bill_lines b
		 left join lateral (select source_id, destination_id, amount, currency from postings p
		                    where p.merchant_id = b.merchant_id and p.merchant_seq = b.merchant_seq and p.idx = b.posting_idx
		                    offset 0) p on true
		 where ($1 = 0 or b.merchant_id = $1)
		   and (p.amount is null
		        or not ((b.account_id = p.source_id and b.amount = -p.amount) or (b.account_id = p.destination_id and b.amount = p.amount))
		        or b.currency <> p.currency))
		union all
		select t.merchant_id, '', format('the bill lines of entry %s differ from it in kind or time, or it does not exist', t.merchant_seq)
		from times t
		limit 1000`},
	// Every posting side on a billable account has its line. Counted
	// first, with no join: per account, its posting sides less its bill
	// lines, one aggregation over the accounts, the postings and the bill
	// lines, as the balance check folds them. Lines map one to one onto
	// the billable sides of their own account (bill_lines_posting_key is
	// unique, and billLines proves each line is a side of its account), so
	// equal counts mean every side has its line. Only an account whose
	// counts differ (none, normally) reads its postings
	// (postings_source_idx, postings_destination_idx) and probes
	// bill_lines_posting_key for each side, to name the side.
	{name: "billSides", cost: 1000, check: CheckBill, sql: `
		with counted as (
			select m.account_id, bool_or(m.billable) as billable, sum(m.n) as missing
			from (
				select id as account_id, true as billable, 0::bigint as n from accounts
				where ($1 = 0 or merchant_id = $1) and type in ('funding', 'card_available')
				union all
				select source_id, false, 1 from postings where $1 = 0 or merchant_id = $1
				union all
				select destination_id, false, 1 from postings where $1 = 0 or merchant_id = $1
				union all
				select account_id, false, -1 from bill_lines where $1 = 0 or merchant_id = $1
			) m
			group by m.account_id
		), problems as materialized (
			select account_id from counted where billable and missing <> 0
		)
		select a.merchant_id, a.address, format('entry %s posting %s has no bill line', s.merchant_seq, s.idx)
		from problems pr
		cross join lateral (select merchant_id, address from accounts where id = pr.account_id offset 0) a
		cross join lateral (
			select p.merchant_id, p.merchant_seq, p.idx from postings p where p.source_id = pr.account_id
			union all
			select p.merchant_id, p.merchant_seq, p.idx from postings p where p.destination_id = pr.account_id
		) s
		where not exists (select 1 from bill_lines b
		                  where b.merchant_id = s.merchant_id and b.merchant_seq = s.merchant_seq
		                    and b.posting_idx = s.idx and b.account_id = pr.account_id offset 0)
		limit 1000`},
	// Each merchant's lines are gapless and end at its head: one
	// aggregation over the heads and the bill lines, by merchant.
	{name: "billSeq", cost: 200, check: CheckBill, sql: `
		select m.merchant_id, '', format('bill sequence: %s lines, highest %s, head says %s',
		       count(m.bill_seq), coalesce(max(m.bill_seq), 0), max(m.head))
		from (
			select merchant_id, last_bill_seq as head, null::bigint as bill_seq
			from ledger_heads where $1 = 0 or merchant_id = $1
			union all
			select merchant_id, null, bill_seq from bill_lines where $1 = 0 or merchant_id = $1
		) m
		group by m.merchant_id
		having count(m.head) > 0
		   and (count(m.bill_seq) <> coalesce(max(m.bill_seq), 0) or coalesce(max(m.bill_seq), 0) <> max(m.head))
		limit 1000`},
	// Each bill line's balance after is the one before plus its amount, and
	// the last one is the account's balance. One window (lag for the line
	// before, lead for the last line) over the lines in (account, bill_seq)
	// order; only the last line of each account, and the problem rows,
	// probe the balance and the address.
	{name: "billChain", cost: 900, check: CheckBillChain, sql: `
		with chained as (
			select b.merchant_id, b.account_id, b.bill_seq, b.amount, b.balance_after,
			       lag(b.balance_after, 1, 0::bigint) over w as before,
			       lead(b.bill_seq) over w is null as last
			from bill_lines b
			where $1 = 0 or b.merchant_id = $1
			window w as (partition by b.account_id order by b.bill_seq)
		), suspects as materialized (
			select * from chained where last or before + amount <> balance_after
		)
		select c.merchant_id, a.address,
		       case when c.before + c.amount <> c.balance_after
		            then format('bill line %s: %s + %s <> balance after %s', c.bill_seq, c.before, c.amount, c.balance_after)
		            else format('last bill line %s says %s, the balance is %s', c.bill_seq, c.balance_after, coalesce(bl.balance::text, 'missing')) end
		from suspects c
		left join lateral (select balance from balances where account_id = c.account_id offset 0) bl on true
		cross join lateral (select address from accounts where id = c.account_id offset 0) a
		where c.before + c.amount <> c.balance_after or (c.last and c.balance_after is distinct from bl.balance)
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
