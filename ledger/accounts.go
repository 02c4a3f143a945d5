package ledger

import (
	"github.com/jackc/pgx/v5"

	"github.com/paygate/gateway/postings"
)

// The accounts a batch reads and creates. An account comes into being with
// its first posting; each is read once per batch, with its balance, and
// every change to a balance is netted and written once by flush.

// WantAccount names an account a command will read, before the batch
// begins (Command.Prefetch): it is read with the head lock, in the batch's
// first round trip, instead of on demand.
func (tx *Tx) WantAccount(a postings.Account) { tx.wanted[a.Address()] = a }

// queueLoad queues the reads of the prefetched rows.
func (tx *Tx) queueLoad(p *Pipeline) {
	addrs := make([]string, 0, len(tx.wanted))
	for a := range tx.wanted {
		addrs = append(addrs, a)
	}
	tx.queueAccounts(p, addrs)
	tx.loadStates(p)
}

// The loads are written so that their plan is index probes whatever the
// statistics say: the array is the outer side, and each row it names is a
// lateral subquery that "offset 0" keeps from being flattened into a join.
// A join, or "= any($1)", leaves the choice to the planner, and a planner
// misled by stale statistics scans the whole table: a hash join over all
// balances cost 2.7 ms per batch for three rows in the first profile, and a
// generic plan made while a table was young kept scanning it as it grew
// (docs/performance.md; TestStatementPlansAreIndexProbes checks every
// statement).
var stmtLoadAccounts = NewStmt(`
	select a.id, a.merchant_id, a.type, a.currency, coalesce(a.card_no, ''), b.balance, b.last_seq
	from unnest($1::text[]) as v(address)
	cross join lateral (select * from accounts a where a.address = v.address offset 0) a
	cross join lateral (select b.balance, b.last_seq from balances b where b.account_id = a.id offset 0) b`)

// ScanAccounts adds the accounts of rows to the batch: rows of a.id,
// a.merchant_id, a.type, a.currency, the card (empty for none), b.balance,
// b.last_seq, as stmtLoadAccounts reads them. A domain whose accounts cannot
// be named before its own rows are read (a card's currency is the card's)
// reads them with those rows, in the same pipeline, and hands them over
// here; an account the batch already holds keeps the batch's view.
func (tx *Tx) ScanAccounts(rows pgx.Rows) error {
	for rows.Next() {
		var r accountBalanceRow
		if err := rows.Scan(&r.ID, &r.MerchantID, &r.Type, &r.Currency, &r.CardNo, &r.Balance, &r.LastSeq); err != nil {
			return err
		}
		a := postings.Account{Merchant: r.MerchantID, Type: postings.AccountType(r.Type), Currency: r.Currency, Card: r.CardNo}
		if _, ok := tx.accounts[a.Address()]; ok {
			continue // already in the batch, perhaps changed: keep the batch's view
		}
		tx.accounts[a.Address()] = &acctState{id: r.ID, account: a, balance: r.Balance, loaded: r.Balance, lastSeq: r.LastSeq}
	}
	return nil
}

// queueAccounts queues the read of accounts by address.
func (tx *Tx) queueAccounts(p *Pipeline, addrs []string) {
	var want []string
	for _, a := range addrs {
		if _, ok := tx.accounts[a]; !ok && !tx.absent[a] {
			want = append(want, a)
		}
	}
	if len(want) == 0 {
		return
	}
	p.Query(stmtLoadAccounts, func(rows pgx.Rows) error {
		if err := tx.ScanAccounts(rows); err != nil {
			return err
		}
		// What was not found does not exist: the merchant's head is locked,
		// so nobody else can create it before this transaction ends.
		for _, addr := range want {
			if _, ok := tx.accounts[addr]; !ok {
				tx.absent[addr] = true
			}
		}
		return nil
	}, want)
}

// knownAbsent reports whether the batch knows that a does not exist: it was
// looked up, or a domain's batch state holds every account of its kind
// (AccountKnower: a card's, read with the card or new in the batch) while
// its merchant's head is locked, so nobody else can create it.
func (tx *Tx) knownAbsent(a postings.Account) bool {
	if tx.absent[a.Address()] {
		return true
	}
	if tx.heads[a.Merchant] == nil {
		return false
	}
	for id, k := range tx.l.kinds {
		if k.knows && tx.states[id] != nil && tx.states[id].(AccountKnower).KnowsAccounts(a) {
			return true
		}
	}
	return false
}

func (tx *Tx) loadAccounts(addrs []string) error {
	p := tx.Pipeline()
	tx.queueAccounts(p, addrs)
	return p.Send()
}

// account returns the batch's view of a, loading it on demand or creating
// it: accounts come into being with their first posting.
func (tx *Tx) account(a postings.Account) (*acctState, error) {
	addr := a.Address()
	if s, ok := tx.accounts[addr]; ok {
		return s, nil
	}
	if !tx.knownAbsent(a) {
		if err := tx.loadAccounts([]string{addr}); err != nil {
			return nil, err
		}
		if s, ok := tx.accounts[addr]; ok {
			return s, nil
		}
	}
	id, err := tx.l.ids.next(tx.ctx, tx.l.db)
	if err != nil {
		return nil, err
	}
	s := &acctState{id: id, account: a, isNew: true}
	tx.accounts[addr] = s
	tx.newAccounts = append(tx.newAccounts, s)
	return s, nil
}

// PeekBalance returns the current balance of a in this batch, 0 for an
// account that does not exist yet, without creating it.
func (tx *Tx) PeekBalance(a postings.Account) (int64, error) {
	addr := a.Address()
	if s, ok := tx.accounts[addr]; ok {
		return s.balance, nil
	}
	if !tx.knownAbsent(a) {
		if err := tx.loadAccounts([]string{addr}); err != nil {
			return 0, err
		}
		if s, ok := tx.accounts[addr]; ok {
			return s.balance, nil
		}
	}
	return 0, nil
}

// Balance returns the current balance of a in this batch, creating the
// account (balance 0) if it does not exist yet.
func (tx *Tx) Balance(a postings.Account) (int64, error) {
	s, err := tx.account(a)
	if err != nil {
		return 0, err
	}
	return s.balance, nil
}
