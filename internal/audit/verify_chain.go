package audit

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/paygate/gateway/ledger"
)

// The bill's balance_after chain: each line's balance after is the one
// before plus its amount (0 before an account's first line, or what a held
// or receivable account held when its lines began: bill_openings,
// verify_position.go), and an
// account's last line says its balance.
//
// The stream follows it as the lines go by, keeping each account's last
// line, and compares the last lines with the balances at the end: the
// writer numbers a merchant's lines in journal order under its head lock,
// so the lines of one account arrive in bill_seq order. A query that
// sorted every bill line by account (billChainCheck) cost a second of
// PostgreSQL's time for a million lines.
//
// Where the lines are not as the writer makes them, the order the stream
// saw is not known to be bill_seq order, and the query decides, in the same
// snapshot, so that the report is exactly the query's: any problem of the
// bill lines themselves (verify_bill.go), a line numbered below one of an
// earlier entry of its merchant, a line on another merchant's account. The
// query decides too when more than chainAccountsMax accounts have lines,
// which bounds the stream's memory (about 50 bytes an account).
type chainFollower struct {
	max      int  // chainAccountsMax unless set (tests)
	off      bool // the query decides
	accounts map[int64]chainAccount
	order    []billLine // one entry's lines in bill_seq order
	problems problemList
	queried  func() // tests: called when the query runs
}

// chainAccountsMax bounds the accounts whose chain the stream follows.
const chainAccountsMax = 1 << 19

// chainAccount is an account's last line so far.
type chainAccount struct {
	balanceAfter int64
	billSeq      int64
	merchant     int64
	broken       bool // its chain is broken: reported as such, not as a wrong last line
}

// giveUp leaves the chain to the query.
func (c *chainFollower) giveUp() {
	c.off, c.accounts, c.problems = true, nil, problemList{}
}

// followChain takes the lines of key k; highest is the merchant's highest
// bill_seq before them.
func (s *chainStream) followChain(k journalKey, highest int64) {
	c := &s.follow
	if c.off || len(s.lines) == 0 {
		return
	}
	if c.accounts == nil {
		c.accounts = make(map[int64]chainAccount, 64)
		if c.max == 0 {
			c.max = chainAccountsMax
		}
	}
	c.order = append(c.order[:0], s.lines...)
	for i := 1; i < len(c.order); i++ { // a few lines: insertion sort
		for j := i; j > 0 && c.order[j].billSeq < c.order[j-1].billSeq; j-- {
			c.order[j], c.order[j-1] = c.order[j-1], c.order[j]
		}
	}
	if c.order[0].billSeq <= highest {
		c.giveUp()
		return
	}
	for _, l := range c.order {
		st, seen := c.accounts[l.account]
		a, ok := s.side(l)
		if !ok || a.Merchant != k.merchant || (!seen && len(c.accounts) >= c.max) {
			c.giveUp()
			return
		}
		before := st.balanceAfter
		if !seen {
			before = s.position.openings[l.account] // 0 unless it held funds when its lines began
		}
		sum := before + l.amount
		overflow := (l.amount > 0 && sum < before) || (l.amount < 0 && sum > before)
		broken := overflow || sum != l.balanceAfter
		if broken {
			c.problems.add(Problem{Check: CheckBillChain, Merchant: k.merchant, Account: a.Address(),
				Detail: fmt.Sprintf("bill line %d: %d + %d <> balance after %d", l.billSeq, before, l.amount, l.balanceAfter)})
		}
		c.accounts[l.account] = chainAccount{balanceAfter: l.balanceAfter, billSeq: l.billSeq, merchant: k.merchant, broken: broken}
	}
}

// verifyBalancesSQL reads balances by account id: one probe of
// balances_pkey per id, whatever the statistics; a missing balance reads
// as NULL.
const verifyBalancesSQL = `
	select v.id, b.balance
	from unnest($1::bigint[]) v(id)
	left join lateral (select balance from balances where account_id = v.id offset 0) b on true`

var verifyBalancesTypes = []uint32{oidInt8, oidInt8}

// verifyBalancesBatch bounds the ids of one balances query.
const verifyBalancesBatch = 1 << 15

// finishChain ends the chain: the query's when the stream gave up;
// otherwise the stream's problems, then the last lines that do not say
// their account's balance, found by the accounts pass (lastLines) or, for
// an account the pass did not see (only without the foreign keys), by a
// probe of its balance. On the stream's connection, the fetcher stopped.
func (s *chainStream) finishChain(ctx context.Context, conn *pgx.Conn, lastLines keyedProblems) error {
	c := &s.follow
	if c.off {
		if c.queried != nil {
			c.queried()
		}
		ps, err := billChainCheck.run(ctx, conn, s.merchant)
		c.problems = ps
		return err
	}
	pc := conn.PgConn()
	ids := slices.Sorted(maps.Keys(c.accounts))
	var buf []byte
	var wrong []int64
	found := map[int64]int64{} // the balances of wrong
	for len(ids) > 0 {
		n := min(len(ids), verifyBalancesBatch)
		buf = appendInt8Array(buf[:0], ids[:n])
		ids = ids[n:]
		rr := pc.ExecParams(ctx, verifyBalancesSQL, [][]byte{buf}, nil, []int16{pgx.TextFormatCode}, []int16{pgx.BinaryFormatCode})
		if err := checkColumns("the balances", rr.FieldDescriptions(), verifyBalancesTypes); err != nil {
			rr.Close()
			return err
		}
		for rr.NextRow() {
			v := rr.Values()
			id, err := int8Col(v, 0)
			if err != nil {
				rr.Close()
				return err
			}
			st := c.accounts[id]
			switch {
			case st.broken:
			case v[1] == nil:
				wrong = append(wrong, id)
			case len(v[1]) != 8:
				rr.Close()
				return fmt.Errorf("ledger: verify: a balance of %d bytes", len(v[1]))
			case readInt8(v[1]) != st.balanceAfter:
				wrong = append(wrong, id)
				found[id] = readInt8(v[1])
			}
		}
		if _, err := rr.Close(); err != nil {
			return ledger.MapError(err)
		}
	}
	if len(wrong) > 0 {
		// Their addresses, for the report (the account cache is the
		// stream's again).
		if err := s.acc.resolve(ctx, pc, wrong); err != nil {
			return err
		}
		for _, id := range wrong {
			b, has := found[id]
			lastLines.add(fmt.Sprintf("%020d", id), lastLineProblem(c.accounts[id], s.acc.get(id).Address(), has, b))
		}
	}
	ls := lastLines.sorted()
	for _, p := range ls.list {
		c.problems.add(p)
	}
	c.problems.omitted += ls.omitted
	return nil
}

// appendInt8Array appends ids as a PostgreSQL array literal.
func appendInt8Array(b []byte, ids []int64) []byte {
	b = append(b, '{')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return append(b, '}')
}

// billChainCheck is the chain as a query, for when the stream gives up.
// One window (lag for the line before, lead for the last line) over the
// lines in (account, bill_seq) order; only the last line of each account,
// and the problem rows, probe the balance and the address. Its problems
// come in the order the stream's would for one account.
var billChainCheck = sqlCheck{name: "billChain", check: CheckBillChain, sql: `
		with chained as (
			select b.merchant_id, b.account_id, b.bill_seq, b.amount, b.balance_after,
			       lag(b.balance_after, 1, coalesce(o.balance, 0::bigint)) over w as before,
			       lead(b.bill_seq) over w is null as last
			from bill_lines b
			left join lateral (select balance from bill_openings where account_id = b.account_id offset 0) o on true
			where $1::bigint = 0 or b.merchant_id = $1
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
		order by c.account_id, c.bill_seq
		limit 1000`}
