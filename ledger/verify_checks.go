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
