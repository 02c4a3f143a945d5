package audit

import (
	"cmp"
	"context"
	"fmt"
	"math/big"
	"math/bits"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// The balances: each account's balance row exists and is the fold of its
// postings; no constrained balance (by flag or by type) is below zero; no
// card receivable is above zero; the balances of each merchant and
// currency sum to zero; and each account's last bill line says its balance
// (verify_chain.go).
//
// The stream folds every posting into its two accounts as it goes by, and
// one pass over the accounts, each with its balance (one probe of
// balances_pkey per account), checks all of them at once. It replaces an
// aggregation of every posting side by PostgreSQL (a hash of two million
// rows for a million postings) and three more queries that each probed
// every account's balance. The fold keeps one sum per account: beyond
// balanceAccountsMax accounts, or if a sum overflows (only in a journal
// changed by hand: the query sums in numeric), the balance comparison is
// the query balanceCheck's, in the same snapshot, and the rest of the pass
// stays.
type balanceFold struct {
	max     int  // balanceAccountsMax unless set (tests)
	off     bool // the query decides the balance comparison
	sums    map[int64]int64
	queried func() // tests: called when the query runs
}

// balanceAccountsMax bounds the accounts the stream folds, about 40 bytes
// each.
const balanceAccountsMax = 1 << 19

// add folds delta into account id.
func (f *balanceFold) add(id, delta int64) {
	if f.off {
		return
	}
	if f.sums == nil {
		f.sums = make(map[int64]int64, 64)
		if f.max == 0 {
			f.max = balanceAccountsMax
		}
	}
	sum, seen := f.sums[id]
	next := sum + delta
	if (!seen && len(f.sums) >= f.max) || (delta > 0 && next < sum) || (delta < 0 && next > sum) {
		f.off, f.sums = true, nil
		return
	}
	f.sums[id] = next
}

// verifyAccountBalancesSQL reads the accounts of the merchant (0: all), each
// with its balance: one probe of balances_pkey per account, whatever the
// statistics; an account without a balance row reads NULL.
const verifyAccountBalancesSQL = `
	select a.id, a.merchant_id, a.type, a.currency, a.address, b.balance, b.constrained
	from accounts a
	left join lateral (select balance, constrained from balances where account_id = a.id offset 0) b on true
	where %[1]d = 0 or a.merchant_id = %[1]d`

const oidBool = 16

var verifyAccountBalancesTypes = []uint32{oidInt8, oidInt8, oidText, oidText, oidText, oidInt8, oidBool}

// accountProblems are the problems of the accounts pass, by check.
type accountProblems struct {
	balance, negative, receivable, currency problemList
}

// currencyKey is a merchant's currency.
type currencyKey struct {
	merchant int64
	currency string
}

// int128 is a sum of balances, which may leave int64's range in a journal
// changed by hand.
type int128 struct {
	hi int64
	lo uint64
}

func (x int128) add(v int64) int128 {
	lo, carry := bits.Add64(x.lo, uint64(v), 0)
	hi := x.hi + int64(carry)
	if v < 0 {
		hi-- // the sign extension of v
	}
	return int128{hi, lo}
}

func (x int128) String() string {
	b := new(big.Int).Lsh(big.NewInt(x.hi), 64)
	return b.Add(b, new(big.Int).SetUint64(x.lo)).String()
}

// checkAccounts is the accounts pass, on the stream's connection once the
// journal is read; then the query for the balances if the fold gave up,
// and the last bill lines of the accounts the pass did not see.
func (s *chainStream) checkAccounts(ctx context.Context, conn *pgx.Conn) error {
	var balance, negative, receivable, lastLines keyedProblems
	currencies := map[currencyKey]int128{}
	pc := conn.PgConn()
	rr := pc.ExecParams(ctx, fmt.Sprintf(verifyAccountBalancesSQL, s.merchant), nil, nil, nil, []int16{pgx.BinaryFormatCode})
	if err := checkColumns("the accounts", rr.FieldDescriptions(), verifyAccountBalancesTypes); err != nil {
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
		m, err := int8Col(v, 1)
		if err != nil {
			rr.Close()
			return err
		}
		typ := postings.AccountType(s.strs.get(v[2]))
		has := v[5] != nil
		var bal int64
		if has {
			if bal, err = int8Col(v, 5); err != nil || len(v[6]) != 1 {
				rr.Close()
				return fmt.Errorf("ledger: verify: the balance of account %d: %d bytes, %d for its flag", id, len(v[5]), len(v[6]))
			}
		}
		address := func() string { return string(v[4]) }
		if !s.fold.off {
			sum := s.fold.sums[id]
			switch {
			case !has:
				balance.add(address(), Problem{Check: CheckBalance, Merchant: m, Account: address(),
					Detail: fmt.Sprintf("balance missing, the postings sum to %d", sum)})
			case bal != sum:
				balance.add(address(), Problem{Check: CheckBalance, Merchant: m, Account: address(),
					Detail: fmt.Sprintf("balance %d, the postings sum to %d", bal, sum)})
			}
		}
		if has {
			if bal < 0 && (v[6][0] == 1 || typ.Constrained()) {
				negative.add(address(), Problem{Check: CheckNegative, Merchant: m, Account: address(),
					Detail: fmt.Sprintf("constrained balance %d is below zero", bal)})
			}
			if typ == postings.AccountCardReceivable && bal > 0 {
				receivable.add(address(), Problem{Check: CheckNegative, Merchant: m, Account: address(),
					Detail: fmt.Sprintf("a receivable is what a card owes, never a credit: %d", bal)})
			}
			k := currencyKey{m, s.strs.get(v[3])}
			currencies[k] = currencies[k].add(bal)
		}
		if st, ok := s.follow.accounts[id]; ok && !s.follow.off {
			delete(s.follow.accounts, id)
			if !st.broken && (!has || bal != st.balanceAfter) {
				lastLines.add(fmt.Sprintf("%020d", id), lastLineProblem(st, address(), has, bal))
			}
		}
	}
	if _, err := rr.Close(); err != nil {
		return ledger.MapError(err)
	}
	keys := slices.SortedFunc(func(yield func(currencyKey) bool) {
		for k := range currencies {
			if !yield(k) {
				return
			}
		}
	}, func(a, b currencyKey) int {
		return cmp.Or(cmp.Compare(a.merchant, b.merchant), cmp.Compare(a.currency, b.currency))
	})
	for _, k := range keys {
		if sum := currencies[k]; sum != (int128{}) {
			s.accounts.currency.add(Problem{Check: CheckCurrency, Merchant: k.merchant,
				Detail: fmt.Sprintf("balances in %s sum to %s", k.currency, sum)})
		}
	}
	s.accounts.balance, s.accounts.negative, s.accounts.receivable = balance.sorted(), negative.sorted(), receivable.sorted()
	if s.fold.off {
		if s.fold.queried != nil {
			s.fold.queried()
		}
		ps, err := balanceCheck.run(ctx, conn, s.merchant)
		if err != nil {
			return err
		}
		s.accounts.balance = ps
	}
	return s.finishChain(ctx, conn, lastLines)
}

// lastLineProblem is an account whose last bill line does not say its
// balance.
func lastLineProblem(st chainAccount, address string, has bool, balance int64) Problem {
	b := "missing"
	if has {
		b = fmt.Sprint(balance)
	}
	return Problem{Check: CheckBillChain, Merchant: st.merchant, Account: address,
		Detail: fmt.Sprintf("last bill line %d says %d, the balance is %s", st.billSeq, st.balanceAfter, b)}
}

// keyedProblems keeps the ProblemsMax problems with the least keys, as
// "order by key limit 1000" would, and counts the others.
type keyedProblems struct {
	items   []keyedProblem
	omitted int64
}

type keyedProblem struct {
	key string
	p   Problem
}

func (k *keyedProblems) add(key string, p Problem) {
	k.items = append(k.items, keyedProblem{key, p})
	if len(k.items) >= 2*ProblemsMax {
		k.trim()
	}
}

func (k *keyedProblems) trim() {
	slices.SortStableFunc(k.items, func(a, b keyedProblem) int { return cmp.Compare(a.key, b.key) })
	if len(k.items) > ProblemsMax {
		k.omitted += int64(len(k.items) - ProblemsMax)
		k.items = k.items[:ProblemsMax]
	}
}

// sorted returns the problems in key order.
func (k *keyedProblems) sorted() problemList {
	k.trim()
	l := problemList{omitted: k.omitted}
	for _, it := range k.items {
		l.list = append(l.list, it.p)
	}
	return l
}

// balanceCheck is the balance comparison as a query, for when the fold
// gives up. One aggregation over accounts (each with its balance, a probe
// of balances_pkey) and both sides of every posting, grouped by account,
// with no join to plan: a join of the folded postings with accounts was
// planned from a guess of 200 groups (PostgreSQL has no statistics for a
// union's output) as a nested loop, 30,000 accounts × 15,000 groups, and
// took 13 s of a 19 s verify on the bench database. Only the problem rows,
// a few when any, are then probed for their addresses, ordered byte by
// byte as the fold's are.
var balanceCheck = sqlCheck{name: "balance", check: CheckBalance, sql: `
		with folded as (
			select m.account_id, bool_or(m.is_account) as is_account,
			       max(m.balance) as balance, bool_or(m.has_balance) as has_balance, sum(m.delta) as total
			from (
				select a.id as account_id, true as is_account, b.balance, b.balance is not null as has_balance, 0::bigint as delta
				from accounts a
				left join lateral (select balance from balances where account_id = a.id offset 0) b on true
				where $1::bigint = 0 or a.merchant_id = $1
				union all
				select source_id, false, null, false, -amount from postings where $1::bigint = 0 or merchant_id = $1
				union all
				select destination_id, false, null, false, amount from postings where $1::bigint = 0 or merchant_id = $1
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
		order by a.address collate "C"
		limit 1000`}
