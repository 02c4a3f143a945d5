package audit

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/paygate/gateway/ledger"
)

// sqlCheck is an invariant checked by a query returning (merchant, account
// address, detail) rows, each one a problem, with $1 the merchant (0: every
// merchant).
type sqlCheck struct {
	name  string // for tests and errors
	check string // the Check* constant of its problems
	// cost orders the queue, longest first, so that the connections end
	// together: milliseconds of PostgreSQL on the bench database.
	cost int
	sql  string
}

// verifyChecks are the checks that read tables the journal does not
// stream, in the order their problems are reported. They run in any order,
// on any connection in the snapshot, beside the stream. Everything else is
// checked by the stream (verify_stream.go, verify_bill.go, verify_chain.go)
// and its pass over the accounts (verify_balances.go); the comparisons of
// the balances and of the bill with the postings are what makes Verify
// catch a changed amount even where the hash chain is recomputed by the
// tamperer.
var verifyChecks = []sqlCheck{
	// Every account's address is the one its identity makes (merchant,
	// type, currency, card: what the postings' hashes commit to through the
	// account's id), no two accounts share an identity, and each balance
	// row is in its account's merchant and currency. The writer finds an
	// account by its address: a changed address would make it open a
	// second account of the same identity and split its balance (issue 30,
	// finding 1), and the hash cannot see it. One pass over accounts and
	// a probe of its balance per account (no hash join: the plan
	// cannot depend on the statistics, plans_read_test.go); a few accounts
	// per merchant and card.
	{name: "accounts", check: CheckAccount, cost: 50, sql: `
		select x.merchant_id, x.address, x.detail from (
		  select a.merchant_id, a.address, a.id,
		         format('account %s: the address is not its identity''s, %s', a.id,
		                'm:' || a.merchant_id || ':' || a.type || ':' || a.currency || coalesce(':' || a.card_no, '')) as detail
		  from accounts a
		  where ($1::bigint = 0 or a.merchant_id = $1)
		    and a.address <> 'm:' || a.merchant_id || ':' || a.type || ':' || a.currency || coalesce(':' || a.card_no, '')
		  union all
		  select a.merchant_id, min(a.address), min(a.id),
		         format('%s accounts (ids %s) have one identity: %s %s %s', count(*), string_agg(a.id::text, ', ' order by a.id),
		                a.type, a.currency, coalesce(a.card_no, ''))
		  from accounts a
		  where ($1::bigint = 0 or a.merchant_id = $1)
		  group by a.merchant_id, a.type, a.currency, a.card_no
		  having count(*) > 1
		  union all
		  select a.merchant_id, a.address, a.id,
		         format('account %s: its balance row says merchant %s and %s', a.id, b.merchant_id, b.currency)
		  from accounts a
		  cross join lateral (select merchant_id, currency from balances where account_id = a.id offset 0) b
		  where ($1::bigint = 0 or a.merchant_id = $1)
		    and (b.merchant_id <> a.merchant_id or b.currency <> a.currency)
		) x
		order by x.merchant_id, x.id, x.detail
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
		where ($1::bigint = 0 or c.merchant_id = $1)
		  and ((a.id is null and h.n > 0) or (a.id is not null and coalesce(b.balance, 0) <> h.held))
		limit 1000`},
	// The counts the filtered bill pages by (bill_blocks, sql/0010) are
	// the bill lines': per merchant, kind, currency and block of 1,024 bill
	// sequence numbers, a count that differs or is missing, and a count
	// whose block holds no such line. Derived like the balances, so
	// checked like them: a wrong count would shift every filtered page
	// after it. The lines are read through the primary key, each group's
	// count and each count's lines by a probe.
	{name: "bill blocks", check: CheckBillBlocks, sql: `
		select x.merchant_id, 'm:' || x.merchant_id || ':bill_blocks:' || x.kind || ':' || x.currency || ':' || x.block,
		       format('%s bill lines, bill_blocks counts %s', x.lines, x.counted)
		from (
		  select l.merchant_id, l.kind, l.currency, l.block, l.n as lines, coalesce(b.n, 0) as counted
		  from (select merchant_id, kind, currency, (bill_seq - 1) / 1024 as block, count(*) as n
		        from bill_lines where ($1::bigint = 0 or merchant_id = $1) group by 1, 2, 3, 4) l
		  left join lateral (select n from bill_blocks b
		                     where b.merchant_id = l.merchant_id and b.kind = l.kind and b.currency = l.currency
		                       and b.block = l.block offset 0) b on true
		  where coalesce(b.n, 0) <> l.n
		  union all
		  select b.merchant_id, b.kind, b.currency, b.block, 0, b.n
		  from bill_blocks b
		  where ($1::bigint = 0 or b.merchant_id = $1)
		    and not (select exists (select 1 from bill_lines l
		                            where l.merchant_id = b.merchant_id
		                              and l.bill_seq between b.block * 1024 + 1 and b.block * 1024 + 1024
		                              and l.kind = b.kind and l.currency = b.currency))
		) x
		order by x.merchant_id, x.kind, x.currency, x.block, x.lines
		limit 1000`},
	// Every authorization against the entries that name it (verify_facts.go).
	holdAuthCheck,
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
		return ps, ledger.MapError(err)
	}
	defer rows.Close()
	for rows.Next() {
		var p Problem
		if err := rows.Scan(&p.Merchant, &p.Account, &p.Detail); err != nil {
			return ps, ledger.MapError(err)
		}
		p.Check = c.check
		ps.add(p)
	}
	return ps, ledger.MapError(rows.Err())
}
