package ledger

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/paygate/gateway/postings"
)

// state is the in-memory view of the rows one batch transaction reads and
// writes. Commands change it; flush writes the net result.
type state struct {
	ctx  context.Context
	conn bun.Conn  // released by end
	pg   *pgx.Conn // the same connection: pipelines and prepared statements
	// tx runs bun's queries on the connection, inside the transaction that
	// the first pipeline begins (commit in writer.go).
	tx    bun.IDB
	began bool // the transaction was begun and is not over yet
	l     *Ledger
	now   time.Time

	heads    map[int64]*head
	accounts map[string]*acctState // by address
	absent   map[string]bool       // addresses looked up and not found
	// cardAccounts are the cards whose accounts are all in accounts: read
	// with the card, or the card is new in this batch.
	cardAccounts map[string]bool
	idem         map[string]*idemRow

	// Rows to insert, in order; a mark records their lengths so that a
	// failed command can be undone by truncation.
	newAccounts []*acctState
	entries     []*postings.Record
	bills       []billLineRow
	idemRows    []*idemRow
	// undo restores what cannot be truncated (balances, heads), newest last.
	undo []func()

	ext extState // rows of the domain tables (cards, holds, …)
}

// head is a merchant's locked journal head plus what commands need to know
// about the merchant.
type head struct {
	merchant Merchant
	seq      int64
	hash     postings.Hash
	billSeq  int64
	eventSeq int64
	ts       time.Time
	dirty    bool
}

// acctState is one account as the batch sees it.
type acctState struct {
	id      int64
	account postings.Account
	balance int64 // current, after the commands so far
	loaded  int64 // as read from the database (0 for a new account)
	lastSeq int64 // merchant sequence of the last entry that moved it
	isNew   bool
	touched bool
}

type mark struct {
	newAccounts, entries, bills, idemRows, undo int
	ext                                         extMark
}

// connAcquireTimeout bounds the wait for a database connection while the
// pool is not saturated, that is while connections are being dialled: when
// PostgreSQL is down or recovering, every attempt would otherwise queue
// behind the pool's dials for up to the batch time-out; failing fast lets
// the API answer 503 at once and the client retry with its key.
const connAcquireTimeout = 5 * time.Second

func (l *Ledger) beginState(ctx context.Context) (*state, error) {
	// The connection is taken with a short deadline of its own; the
	// transaction then lives on ctx (database/sql ties a transaction to the
	// context it began with).
	actx, cancel := context.WithTimeout(ctx, connAcquireTimeout)
	conn, err := l.db.Conn(actx)
	cancel()
	if err != nil && ctx.Err() == nil {
		// Every connection busy with healthy work (a burst of reads) is
		// not an outage: then wait for one with the batch's deadline.
		if s := l.db.Stats(); s.MaxOpenConnections > 0 && s.InUse >= s.MaxOpenConnections {
			conn, err = l.db.Conn(ctx)
		}
	}
	if err != nil {
		return nil, &postings.Error{Code: postings.EUNAVAILABLE, Message: "the database is unavailable"}
	}
	pg, err := pgConnOf(conn)
	if err != nil {
		conn.Close()
		return nil, mapError(err)
	}
	return &state{
		ctx:          ctx,
		conn:         conn,
		pg:           pg,
		tx:           conn,
		l:            l,
		now:          l.now(),
		heads:        map[int64]*head{},
		accounts:     map[string]*acctState{},
		absent:       map[string]bool{},
		cardAccounts: map[string]bool{},
		idem:         map[string]*idemRow{},
	}, nil
}

// pipeline starts a pipeline on the batch's connection.
func (st *state) pipeline() *pipeline { return newPipeline(st.ctx, st.pg, st.l.db) }

// begin queues the start of the batch's transaction. The transaction is
// READ COMMITTED: every row a command decides on is read after the
// merchant's head is locked, and only the writer changes them under it.
func (st *state) begin(p *pipeline) {
	p.text("begin isolation level read committed", nil)
	st.began = true
}

// commitTx commits the batch's transaction. An error means the outcome is
// unknown (the COMMIT may have been applied), except when PostgreSQL
// answered that it rolled back.
func (st *state) commitTx() error {
	tag, err := st.pg.Exec(st.ctx, "commit")
	if err != nil {
		return &outcomeUnknownError{err: err}
	}
	st.began = false
	if tag.String() != "COMMIT" {
		// PostgreSQL answers a COMMIT of a failed transaction with ROLLBACK.
		return errInvariant("the batch transaction was rolled back at commit (%s)", tag.String())
	}
	return nil
}

// rollbackTimeout bounds the ROLLBACK of an abandoned batch.
const rollbackTimeout = 5 * time.Second

// end rolls back a transaction that is still open and returns the
// connection to the pool. A connection left inside a transaction (the
// rollback failed) is discarded by the pool, not reused.
func (st *state) end() {
	if st.began {
		ctx, cancel := context.WithTimeout(context.Background(), rollbackTimeout)
		_, _ = st.pg.Exec(ctx, "rollback")
		cancel()
		st.began = false
	}
	_ = st.conn.Close()
}

func (st *state) mark() mark {
	return mark{len(st.newAccounts), len(st.entries), len(st.bills), len(st.idemRows), len(st.undo), st.ext.mark()}
}

func (st *state) rollback(m mark) {
	for i := len(st.undo) - 1; i >= m.undo; i-- {
		st.undo[i]()
	}
	st.undo = st.undo[:m.undo]
	for _, a := range st.newAccounts[m.newAccounts:] {
		delete(st.accounts, a.account.Address())
	}
	st.newAccounts = st.newAccounts[:m.newAccounts]
	st.entries = st.entries[:m.entries]
	st.bills = st.bills[:m.bills]
	for _, r := range st.idemRows[m.idemRows:] {
		delete(st.idem, r.id())
	}
	st.idemRows = st.idemRows[:m.idemRows]
	st.ext.rollback(m.ext)
}

// stmtLockHeads locks the journal heads of the batch's merchants in id
// order, so that two transactions never wait on each other in a cycle: $1
// is sorted (uniqueSorted), and each head is locked by its own probe in the
// order of the array (the function scan is the outer side of the nested
// loops, so it drives them in that order).
var stmtLockHeads = newStmt(`
	select h.merchant_id, h.last_seq, h.last_hash, h.last_bill_seq, h.last_event_seq, h.last_ts,
	       m.shop_no, m.name, m.currencies, m.status, m.ip_whitelist, coalesce(m.callback_url, ''),
	       m.kyb_tier, m.created_at, m.last_authenticated_at
	from unnest($1::bigint[]) with ordinality as v(m, i)
	cross join lateral (select * from ledger_heads h where h.merchant_id = v.m for update) h
	cross join lateral (select * from merchants m where m.id = v.m offset 0) m
	order by v.i`)

// queueLockHeads queues the lock of the merchants' heads. Merchants without
// a head are absent from st.heads; their commands fail alone.
func (st *state) queueLockHeads(p *pipeline, merchants []int64) {
	p.query(stmtLockHeads, func(rows pgx.Rows) error {
		for rows.Next() {
			var r merchantRow
			var hash []byte
			h := &head{}
			if err := rows.Scan(&r.ID, &h.seq, &hash, &h.billSeq, &h.eventSeq, &h.ts,
				&r.ShopNo, &r.Name, &r.Currencies, &r.Status, &r.IPWhitelist, &r.CallbackURL,
				&r.KYBTier, &r.CreatedAt, &r.LastAuthAt); err != nil {
				return err
			}
			if len(hash) != len(h.hash) {
				return fmt.Errorf("ledger: head of merchant %d has a %d-byte hash", r.ID, len(hash))
			}
			copy(h.hash[:], hash)
			h.ts = h.ts.UTC()
			h.merchant = r.toMerchant()
			st.heads[r.ID] = h
		}
		return nil
	}, uniqueSorted(merchants))
}

// head returns the locked head of merchant m.
func (st *state) head(m int64) (*head, error) {
	h := st.heads[m]
	if h == nil {
		return nil, postings.ReasonErrorf(postings.ENOTFOUND, "merchant", "merchant not found")
	}
	return h, nil
}

// touchHead saves the head for undo before a change.
func (st *state) touchHead(h *head) {
	saved := *h
	st.undo = append(st.undo, func() { *h = saved })
	h.dirty = true
}

// prefetch collects the rows a batch will read.
type prefetch struct {
	addresses map[string]postings.Account
	ext       extPrefetch
}

func newPrefetch() *prefetch {
	return &prefetch{addresses: map[string]postings.Account{}}
}

func (p *prefetch) account(a postings.Account) { p.addresses[a.Address()] = a }

// queueLoad queues the reads of the prefetched rows.
func (st *state) queueLoad(p *pipeline, pf *prefetch) {
	addrs := make([]string, 0, len(pf.addresses))
	for a := range pf.addresses {
		addrs = append(addrs, a)
	}
	st.queueAccounts(p, addrs)
	st.ext.queueLoad(st, p, &pf.ext)
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
var stmtLoadAccounts = newStmt(`
	select a.id, a.merchant_id, a.type, a.currency, coalesce(a.card_no, ''), b.balance, b.last_seq
	from unnest($1::text[]) as v(address)
	cross join lateral (select * from accounts a where a.address = v.address offset 0) a
	cross join lateral (select b.balance, b.last_seq from balances b where b.account_id = a.id offset 0) b`)

// stmtLoadCardAccounts reads every account of the given cards: a card's
// accounts cannot be named before the card is read (their currency is the
// card's), so they are read with it, in the same pipeline.
var stmtLoadCardAccounts = newStmt(`
	select a.id, a.merchant_id, a.type, a.currency, a.card_no, b.balance, b.last_seq
	from unnest($1::text[]) as v(card_no)
	cross join lateral (select * from accounts a where a.card_no = v.card_no offset 0) a
	cross join lateral (select b.balance, b.last_seq from balances b where b.account_id = a.id offset 0) b`)

// scanAccounts adds the accounts of rows to the batch.
func (st *state) scanAccounts(rows pgx.Rows) error {
	for rows.Next() {
		var r accountBalanceRow
		if err := rows.Scan(&r.ID, &r.MerchantID, &r.Type, &r.Currency, &r.CardNo, &r.Balance, &r.LastSeq); err != nil {
			return err
		}
		a := postings.Account{Merchant: r.MerchantID, Type: postings.AccountType(r.Type), Currency: r.Currency, Card: r.CardNo}
		if _, ok := st.accounts[a.Address()]; ok {
			continue // already in the batch, perhaps changed: keep the batch's view
		}
		st.accounts[a.Address()] = &acctState{id: r.ID, account: a, balance: r.Balance, loaded: r.Balance, lastSeq: r.LastSeq}
	}
	return nil
}

// queueAccounts queues the read of accounts by address.
func (st *state) queueAccounts(p *pipeline, addrs []string) {
	var want []string
	for _, a := range addrs {
		if _, ok := st.accounts[a]; !ok && !st.absent[a] {
			want = append(want, a)
		}
	}
	if len(want) == 0 {
		return
	}
	p.query(stmtLoadAccounts, func(rows pgx.Rows) error {
		if err := st.scanAccounts(rows); err != nil {
			return err
		}
		// What was not found does not exist: the merchant's head is locked,
		// so nobody else can create it before this transaction ends.
		for _, addr := range want {
			if _, ok := st.accounts[addr]; !ok {
				st.absent[addr] = true
			}
		}
		return nil
	}, want)
}

// queueCardAccounts queues the read of every account of the cards.
func (st *state) queueCardAccounts(p *pipeline, cardNos []string) {
	var want []string
	for _, c := range cardNos {
		if !st.cardAccounts[c] {
			want = append(want, c)
		}
	}
	if len(want) == 0 {
		return
	}
	// One probe per element: no element twice.
	want = uniqueSorted(want)
	p.query(stmtLoadCardAccounts, func(rows pgx.Rows) error {
		if err := st.scanAccounts(rows); err != nil {
			return err
		}
		for _, c := range want {
			st.cardAccounts[c] = true
		}
		return nil
	}, want)
}

// knownAbsent reports whether the batch knows that a does not exist: it was
// looked up, or it is an account of a card whose accounts were all read (or
// that the batch created) while its merchant's head is locked.
func (st *state) knownAbsent(a postings.Account) bool {
	if st.absent[a.Address()] {
		return true
	}
	return a.Card != "" && st.cardAccounts[a.Card] && st.heads[a.Merchant] != nil
}

func (st *state) loadAccounts(addrs []string) error {
	p := st.pipeline()
	st.queueAccounts(p, addrs)
	return p.send()
}

// account returns the batch's view of a, loading it on demand or creating
// it: accounts come into being with their first posting.
func (st *state) account(a postings.Account) (*acctState, error) {
	addr := a.Address()
	if s, ok := st.accounts[addr]; ok {
		return s, nil
	}
	if !st.knownAbsent(a) {
		if err := st.loadAccounts([]string{addr}); err != nil {
			return nil, err
		}
		if s, ok := st.accounts[addr]; ok {
			return s, nil
		}
	}
	id, err := st.l.ids.next(st.ctx, st.l.db)
	if err != nil {
		return nil, err
	}
	s := &acctState{id: id, account: a, isNew: true}
	st.accounts[addr] = s
	st.newAccounts = append(st.newAccounts, s)
	return s, nil
}

// peekBalance returns the current balance of a in this batch, 0 for an
// account that does not exist yet, without creating it.
func (st *state) peekBalance(a postings.Account) (int64, error) {
	addr := a.Address()
	if s, ok := st.accounts[addr]; ok {
		return s.balance, nil
	}
	if !st.knownAbsent(a) {
		if err := st.loadAccounts([]string{addr}); err != nil {
			return 0, err
		}
		if s, ok := st.accounts[addr]; ok {
			return s.balance, nil
		}
	}
	return 0, nil
}

// Balance returns the current balance of a in this batch (0 for an account
// that does not exist yet).
func (st *state) balance(a postings.Account) (int64, error) {
	s, err := st.account(a)
	if err != nil {
		return 0, err
	}
	return s.balance, nil
}

// post validates e against the batch's balances and appends it to the
// journal: the merchant's next sequence number, the chain hash, the new
// balances and the bill lines. Every posting is checked as it is applied, so
// no constrained account is ever below zero, not even inside an entry.
func (st *state) post(e postings.Entry) (*postings.Record, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	h, err := st.head(e.Merchant)
	if err != nil {
		return nil, err
	}
	m := st.mark()
	if err := st.chargeCardLoads(h, &e); err != nil {
		st.rollback(m)
		return nil, err
	}
	rec := &postings.Record{Entry: e}
	st.touchHead(h)
	h.seq++
	rec.Seq = h.seq
	rec.CreatedAt = st.now
	if rec.CreatedAt.Before(h.ts) {
		rec.CreatedAt = h.ts // never decreasing per merchant, even across clock steps
	}
	for i, p := range e.Postings {
		src, err := st.account(p.Source)
		if err != nil {
			st.rollback(m)
			return nil, err
		}
		dst, err := st.account(p.Destination)
		if err != nil {
			st.rollback(m)
			return nil, err
		}
		if err := st.move(src, -p.Amount, rec.Seq); err != nil {
			st.rollback(m)
			return nil, err
		}
		if err := st.move(dst, p.Amount, rec.Seq); err != nil {
			st.rollback(m)
			return nil, err
		}
		for _, side := range []struct {
			a      *acctState
			amount int64
		}{{src, -p.Amount}, {dst, p.Amount}} {
			if !side.a.account.Type.Billable() {
				continue
			}
			h.billSeq++
			st.bills = append(st.bills, billLineRow{
				MerchantID: e.Merchant, BillSeq: h.billSeq, MerchantSeq: rec.Seq, PostingIdx: int16(i),
				AccountID: side.a.id, Kind: string(e.Kind), Amount: side.amount, Currency: p.Currency,
				BalanceAfter: side.a.balance, CreatedAt: rec.CreatedAt,
				CardNo: nullString(e.Refs.CardNo), TxID: nullString(e.Refs.TxID), AuthID: nullString(e.Refs.AuthID),
			})
		}
	}
	rec.PrevHash = h.hash
	rec.Hash = postings.ChainHash(h.hash, rec)
	h.hash = rec.Hash
	h.ts = rec.CreatedAt
	st.entries = append(st.entries, rec)
	return rec, nil
}

// move changes a balance by delta, refusing to take a constrained account
// below zero.
func (st *state) move(a *acctState, delta int64, seq int64) error {
	next, ok := addInt64(a.balance, delta)
	if !ok {
		// Never the account's address: it names internal ids (docs/errors.md).
		return postings.Errorf(postings.ELIMIT, "the %s balance would overflow", describeAccount(a.account.Type))
	}
	if next < 0 && a.account.Type.Constrained() {
		return &postings.Error{Code: postings.EINSUFFICIENT, Reason: string(a.account.Type),
			Message: fmt.Sprintf("insufficient funds: the %s balance is %s %s", describeAccount(a.account.Type),
				postings.FormatMinor(a.balance, postings.MustCurrency(a.account.Currency)), a.account.Currency)}
	}
	prevBal, prevSeq, prevTouched := a.balance, a.lastSeq, a.touched
	st.undo = append(st.undo, func() { a.balance, a.lastSeq, a.touched = prevBal, prevSeq, prevTouched })
	a.balance, a.lastSeq, a.touched = next, seq, true
	return nil
}

func describeAccount(t postings.AccountType) string {
	switch t {
	case postings.AccountFunding:
		return "funding account"
	case postings.AccountCardAvailable:
		return "card's available"
	case postings.AccountCardHeld:
		return "card's held"
	case postings.AccountRemitInFlight:
		return "remittance in flight"
	}
	return string(t)
}

func addInt64(a, b int64) (int64, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}

func uniqueSorted[T cmp.Ordered](xs []T) []T {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}

func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}
