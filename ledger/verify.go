package ledger

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/paygate/gateway/postings"
)

// Problem is one break of an invariant, named precisely enough to act on.
type Problem struct {
	Check    string `json:"check"`              // which invariant: see the Check* constants
	Merchant int64  `json:"merchant,omitempty"` // the merchant, when it is about one
	Seq      int64  `json:"seq,omitempty"`      // the journal entry, when it is about one
	Account  string `json:"account,omitempty"`  // the account address, when it is about one
	Detail   string `json:"detail"`
}

func (p Problem) String() string {
	s := p.Check
	if p.Merchant != 0 {
		s += fmt.Sprintf(" merchant=%d", p.Merchant)
	}
	if p.Seq != 0 {
		s += fmt.Sprintf(" seq=%d", p.Seq)
	}
	if p.Account != "" {
		s += " account=" + p.Account
	}
	return s + ": " + p.Detail
}

// The invariants Verify checks.
const (
	CheckSequence   = "sequence"    // merchant sequences run 1..n without gaps
	CheckHashChain  = "hash_chain"  // each entry's prev_hash and hash
	CheckBalanced   = "balanced"    // each entry sums to zero per currency, within its merchant
	CheckHead       = "head"        // the journal head matches the last entry
	CheckBalance    = "balance"     // each balance equals the fold of its postings
	CheckNegative   = "negative"    // no constrained balance below zero
	CheckCurrency   = "currency"    // balances of each merchant and currency sum to zero
	CheckBill       = "bill"        // bill lines are exactly the billable posting sides
	CheckBillChain  = "bill_chain"  // balance_after follows from the amounts
	CheckEmptyEntry = "empty_entry" // an entry without postings
	CheckHolds      = "holds"       // each card's held balance is the sum of its open holds
)

// Report is the outcome of Verify.
type Report struct {
	Merchants       int64     `json:"merchants"`
	Entries         int64     `json:"entries"`
	Postings        int64     `json:"postings"`
	Problems        []Problem `json:"problems"`
	ProblemsOmitted int64     `json:"problemsOmitted"` // beyond ProblemsMax
	Elapsed         string    `json:"elapsed"`
}

// OK reports whether no invariant is broken.
func (r *Report) OK() bool { return len(r.Problems) == 0 && r.ProblemsOmitted == 0 }

// ProblemsMax bounds the problems a report lists; the rest are counted.
const ProblemsMax = 1000

func (r *Report) add(p Problem) {
	if len(r.Problems) >= ProblemsMax {
		r.ProblemsOmitted++
		return
	}
	r.Problems = append(r.Problems, p)
}

// VerifyOptions narrow Verify.
type VerifyOptions struct {
	Merchant int64 // 0: every merchant
	// Progress is called now and then with the entries checked so far and
	// the total to check.
	Progress func(done, total int64)
}

// Verify recomputes everything derived from the journal and reports what
// does not match: sequences, hash chains, the balance of each entry, the
// heads, the balances table, the bill lines. It reads one consistent
// snapshot, streams the journal (memory does not grow with its size) and
// leaves the heavy folds to PostgreSQL.
func (l *Ledger) Verify(ctx context.Context, opts VerifyOptions) (*Report, error) {
	start := time.Now()
	tx, err := l.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, mapError(err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	// One snapshot of a journal of millions of entries takes longer than
	// the statement time-out meant for requests; the scan is read-only and
	// bounded by the journal's size, so it gets its own limit.
	if _, err := tx.ExecContext(ctx, `set local statement_timeout = '2h'`); err != nil {
		return nil, mapError(err)
	}
	rep := &Report{}
	v := &verifier{ctx: ctx, tx: tx.Tx, rep: rep, merchant: opts.Merchant, progress: opts.Progress}
	for _, step := range []func() error{v.chains, v.balances, v.bills} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	rep.Elapsed = time.Since(start).Round(time.Millisecond).String()
	return rep, nil
}

type verifier struct {
	ctx      context.Context
	tx       *sql.Tx
	rep      *Report
	merchant int64
	progress func(done, total int64)
}

// chains streams entries with their postings in (merchant, seq, idx) order
// and checks sequences, hashes, per-entry balance and the heads.
func (v *verifier) chains() error {
	heads := map[int64]struct {
		seq  int64
		hash []byte
	}{}
	rows, err := v.tx.QueryContext(v.ctx, `select merchant_id, last_seq, last_hash from ledger_heads where $1 = 0 or merchant_id = $1`, v.merchant)
	if err != nil {
		return mapError(err)
	}
	for rows.Next() {
		var m, seq int64
		var h []byte
		if err := rows.Scan(&m, &seq, &h); err != nil {
			rows.Close()
			return mapError(err)
		}
		heads[m] = struct {
			seq  int64
			hash []byte
		}{seq, h}
	}
	rows.Close()
	v.rep.Merchants = int64(len(heads))

	var total int64
	if err := v.tx.QueryRowContext(v.ctx, `select count(*) from entries where $1 = 0 or merchant_id = $1`, v.merchant).Scan(&total); err != nil {
		return mapError(err)
	}

	rows, err = v.tx.QueryContext(v.ctx, `
		select e.merchant_id, e.merchant_seq, e.kind, e.created_at, coalesce(e.card_no, ''), coalesce(e.tx_id, ''),
		       coalesce(e.auth_id, ''), e.metadata, e.prev_hash, e.hash,
		       p.idx, p.amount, p.currency,
		       sa.merchant_id, sa.type, sa.currency, coalesce(sa.card_no, ''),
		       da.merchant_id, da.type, da.currency, coalesce(da.card_no, '')
		from entries e
		left join postings p on p.merchant_id = e.merchant_id and p.merchant_seq = e.merchant_seq
		left join accounts sa on sa.id = p.source_id
		left join accounts da on da.id = p.destination_id
		where $1 = 0 or e.merchant_id = $1
		order by e.merchant_id, e.merchant_seq, p.idx`, v.merchant)
	if err != nil {
		return mapError(err)
	}
	defer rows.Close()

	var (
		cur      *postings.Record // the entry being assembled
		stored   postings.Hash
		merchant int64
		expected int64 // next expected sequence of merchant
		prev     postings.Hash
	)
	finishMerchant := func() {
		if merchant == 0 {
			return
		}
		h, ok := heads[merchant]
		switch {
		case !ok:
			v.rep.add(Problem{Check: CheckHead, Merchant: merchant, Detail: "entries without a journal head"})
		case h.seq != expected-1:
			v.rep.add(Problem{Check: CheckHead, Merchant: merchant, Detail: fmt.Sprintf("head says %d entries, the journal has %d", h.seq, expected-1)})
		case !bytes.Equal(h.hash, prev[:]):
			v.rep.add(Problem{Check: CheckHead, Merchant: merchant, Detail: "head hash differs from the last entry's hash"})
		}
		delete(heads, merchant)
	}
	finishEntry := func() {
		if cur == nil {
			return
		}
		v.checkEntry(cur, stored, &expected, &prev)
		v.rep.Entries++
		if v.progress != nil && v.rep.Entries%10_000 == 0 {
			v.progress(v.rep.Entries, total)
		}
		cur = nil
	}
	for rows.Next() {
		var (
			m, seq               int64
			kind, card, tx, auth string
			createdAt            time.Time
			meta                 []byte
			prevHash, hash       []byte
			idx                  sql.NullInt64
			amount               sql.NullInt64
			currency             sql.NullString
			sm, dm               sql.NullInt64
			st, sc, scard        sql.NullString
			dt, dc, dcard        sql.NullString
		)
		if err := rows.Scan(&m, &seq, &kind, &createdAt, &card, &tx, &auth, &meta, &prevHash, &hash,
			&idx, &amount, &currency, &sm, &st, &sc, &scard, &dm, &dt, &dc, &dcard); err != nil {
			return mapError(err)
		}
		if cur == nil || cur.Merchant != m || cur.Seq != seq {
			finishEntry()
			if m != merchant {
				finishMerchant()
				merchant, expected, prev = m, 1, postings.GenesisHash
			}
			cur = &postings.Record{Entry: postings.Entry{Merchant: m, Kind: postings.Kind(kind),
				Refs: postings.Refs{CardNo: card, TxID: tx, AuthID: auth}}, Seq: seq, CreatedAt: createdAt.UTC()}
			if len(meta) > 2 {
				if err := json.Unmarshal(meta, &cur.Metadata); err != nil {
					v.rep.add(Problem{Check: CheckHashChain, Merchant: m, Seq: seq, Detail: "metadata is not a JSON object of strings"})
				}
			}
			copy(cur.PrevHash[:], prevHash)
			copy(stored[:], hash)
		}
		if idx.Valid {
			v.rep.Postings++
			cur.Postings = append(cur.Postings, postings.Posting{
				Source:      postings.Account{Merchant: sm.Int64, Type: postings.AccountType(st.String), Currency: sc.String, Card: scard.String},
				Destination: postings.Account{Merchant: dm.Int64, Type: postings.AccountType(dt.String), Currency: dc.String, Card: dcard.String},
				Amount:      amount.Int64, Currency: currency.String,
			})
		}
	}
	if err := rows.Err(); err != nil {
		return mapError(err)
	}
	finishEntry()
	finishMerchant()
	for m, h := range heads {
		if h.seq != 0 {
			v.rep.add(Problem{Check: CheckHead, Merchant: m, Detail: fmt.Sprintf("head says %d entries, the journal has none", h.seq)})
		}
	}
	if v.progress != nil {
		v.progress(v.rep.Entries, total)
	}
	return nil
}

// checkEntry checks one entry against the chain so far.
func (v *verifier) checkEntry(r *postings.Record, stored postings.Hash, expected *int64, prev *postings.Hash) {
	m, seq := r.Merchant, r.Seq
	if seq != *expected {
		v.rep.add(Problem{Check: CheckSequence, Merchant: m, Seq: seq, Detail: fmt.Sprintf("expected sequence %d", *expected)})
	}
	*expected = seq + 1
	if r.PrevHash != *prev {
		v.rep.add(Problem{Check: CheckHashChain, Merchant: m, Seq: seq, Detail: "prev_hash is not the previous entry's hash"})
	}
	if len(r.Postings) == 0 {
		v.rep.add(Problem{Check: CheckEmptyEntry, Merchant: m, Seq: seq, Detail: "entry without postings"})
	}
	if got := postings.ChainHash(r.PrevHash, r); got != stored {
		v.rep.add(Problem{Check: CheckHashChain, Merchant: m, Seq: seq,
			Detail: fmt.Sprintf("stored hash %s, recomputed %s: the entry or its postings changed", stored, got)})
	}
	// Balanced per currency, counted on the accounts' own currencies, and
	// confined to the merchant.
	net := map[string]int64{}
	for _, p := range r.Postings {
		net[p.Source.Currency] -= p.Amount
		net[p.Destination.Currency] += p.Amount
		if p.Source.Merchant != m || p.Destination.Merchant != m {
			v.rep.add(Problem{Check: CheckBalanced, Merchant: m, Seq: seq, Detail: "a posting touches another merchant's account"})
		}
		if p.Amount <= 0 {
			v.rep.add(Problem{Check: CheckBalanced, Merchant: m, Seq: seq, Detail: fmt.Sprintf("posting amount %d", p.Amount)})
		}
	}
	for cur, n := range net {
		if n != 0 {
			v.rep.add(Problem{Check: CheckBalanced, Merchant: m, Seq: seq, Detail: fmt.Sprintf("does not sum to zero in %s (%d)", cur, n)})
		}
	}
	*prev = stored
}

// balances compares the balances table with the fold of the postings, and
// checks the rules every balance obeys.
func (v *verifier) balances() error {
	if err := v.query(`
		with moves as (
			select source_id as account_id, -amount as delta from postings where $1 = 0 or merchant_id = $1
			union all
			select destination_id, amount from postings where $1 = 0 or merchant_id = $1
		), folded as (
			select account_id, sum(delta) as total from moves group by account_id
		)
		select a.merchant_id, a.address,
		       format('balance %s, the postings sum to %s', coalesce(b.balance::text, 'missing'), coalesce(f.total, 0))
		from accounts a
		left join balances b on b.account_id = a.id
		left join folded f on f.account_id = a.id
		where ($1 = 0 or a.merchant_id = $1)
		  and (b.balance is null or b.balance <> coalesce(f.total, 0))
		order by a.address
		limit 1000`, CheckBalance); err != nil {
		return err
	}
	if err := v.query(`
		select a.merchant_id, a.address, format('constrained balance %s is below zero', b.balance)
		from balances b join accounts a on a.id = b.account_id
		where ($1 = 0 or a.merchant_id = $1)
		  and (b.balance < 0 and (b.constrained or a.type in ('funding', 'card_available', 'card_held', 'remit_in_flight')))
		limit 1000`, CheckNegative); err != nil {
		return err
	}
	// The held balance of every issued card is the sum of its open holds
	// (accounts of cards the card domain never issued, which only direct
	// Append callers make, have no hold rows to compare with), and an
	// authorization holds exactly while it is open: the hold table and the
	// journal are checked against each other.
	if err := v.query(`
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
		limit 1000`, CheckHolds); err != nil {
		return err
	}
	if err := v.query(`
		select a.merchant_id, a.address, format('a receivable is what a card owes, never a credit: %s', b.balance)
		from balances b join accounts a on a.id = b.account_id
		where ($1 = 0 or a.merchant_id = $1) and a.type = 'card_receivable' and b.balance > 0
		limit 1000`, CheckNegative); err != nil {
		return err
	}
	return v.query(`
		select a.merchant_id, '', format('balances in %s sum to %s', a.currency, sum(b.balance))
		from balances b join accounts a on a.id = b.account_id
		where $1 = 0 or a.merchant_id = $1
		group by a.merchant_id, a.currency
		having sum(b.balance) <> 0
		limit 1000`, CheckCurrency)
}

// bills checks that the bill lines are exactly the movements of billable
// accounts, gapless, with balances after that follow from the amounts.
func (v *verifier) bills() error {
	if err := v.query(`
		select b.merchant_id, '', format('bill line %s (entry %s) has no matching posting side', b.bill_seq, b.merchant_seq)
		from bill_lines b
		left join postings p on p.merchant_id = b.merchant_id and p.merchant_seq = b.merchant_seq and p.idx = b.posting_idx
		left join entries e on e.merchant_id = b.merchant_id and e.merchant_seq = b.merchant_seq
		where ($1 = 0 or b.merchant_id = $1)
		  and (p.merchant_id is null
		       or not ((b.account_id = p.source_id and b.amount = -p.amount) or (b.account_id = p.destination_id and b.amount = p.amount))
		       or b.currency <> p.currency or e.kind <> b.kind or e.created_at <> b.created_at)
		limit 1000`, CheckBill); err != nil {
		return err
	}
	if err := v.query(`
		with sides as (
			select p.merchant_id, p.merchant_seq, p.idx, p.source_id as account_id from postings p where $1 = 0 or p.merchant_id = $1
			union all
			select p.merchant_id, p.merchant_seq, p.idx, p.destination_id from postings p where $1 = 0 or p.merchant_id = $1
		)
		select s.merchant_id, a.address, format('entry %s posting %s has no bill line', s.merchant_seq, s.idx)
		from sides s
		join accounts a on a.id = s.account_id and a.type in ('funding', 'card_available')
		left join bill_lines b on b.merchant_id = s.merchant_id and b.merchant_seq = s.merchant_seq
		                      and b.posting_idx = s.idx and b.account_id = s.account_id
		where b.merchant_id is null
		limit 1000`, CheckBill); err != nil {
		return err
	}
	if err := v.query(`
		select h.merchant_id, '', format('bill sequence: %s lines, highest %s, head says %s', count(b.bill_seq), coalesce(max(b.bill_seq), 0), h.last_bill_seq)
		from ledger_heads h left join bill_lines b on b.merchant_id = h.merchant_id
		where $1 = 0 or h.merchant_id = $1
		group by h.merchant_id, h.last_bill_seq
		having count(b.bill_seq) <> coalesce(max(b.bill_seq), 0) or coalesce(max(b.bill_seq), 0) <> h.last_bill_seq
		limit 1000`, CheckBill); err != nil {
		return err
	}
	return v.query(`
		with chained as (
			select b.merchant_id, b.account_id, b.bill_seq, b.amount, b.balance_after,
			       lag(b.balance_after, 1, 0::bigint) over (partition by b.account_id order by b.bill_seq) as before,
			       row_number() over (partition by b.account_id order by b.bill_seq desc) as from_end
			from bill_lines b
			where $1 = 0 or b.merchant_id = $1
		)
		select c.merchant_id, a.address,
		       case when c.before + c.amount <> c.balance_after
		            then format('bill line %s: %s + %s <> balance after %s', c.bill_seq, c.before, c.amount, c.balance_after)
		            else format('last bill line %s says %s, the balance is %s', c.bill_seq, c.balance_after, bl.balance) end
		from chained c
		join accounts a on a.id = c.account_id
		join balances bl on bl.account_id = c.account_id
		where c.before + c.amount <> c.balance_after or (c.from_end = 1 and c.balance_after <> bl.balance)
		limit 1000`, CheckBillChain)
}

// query runs a check query returning (merchant, account, detail) rows, each
// one a problem.
func (v *verifier) query(q, check string) error {
	rows, err := v.tx.QueryContext(v.ctx, q, v.merchant)
	if err != nil {
		return mapError(err)
	}
	defer rows.Close()
	for rows.Next() {
		var p Problem
		if err := rows.Scan(&p.Merchant, &p.Account, &p.Detail); err != nil {
			return mapError(err)
		}
		p.Check = check
		v.rep.add(p)
	}
	return mapError(rows.Err())
}
