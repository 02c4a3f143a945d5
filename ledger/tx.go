package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/paygate/gateway/postings"
)

// Tx is one batch transaction as the commands see it: the in-memory view
// of the rows the batch reads and writes. Commands change it through its
// methods (Merchant, Balance, Post, Emit) and through the batch states of
// their domains (State); flush writes the net result. Everything a failed
// command did to it is undone (Undo), so it fails alone.
//
// A Tx is used by one goroutine, the writer's shard, for one batch.
type Tx struct {
	ctx  context.Context
	conn bun.Conn  // released by end
	pg   *pgx.Conn // the same connection: pipelines and prepared statements
	// idb runs bun's queries on the connection, inside the transaction that
	// the first pipeline begins (commit in writer.go).
	idb   bun.IDB
	began bool // the transaction was begun and is not over yet
	// unknown: the COMMIT was sent and not answered; end discards the
	// connection.
	unknown bool
	l       *Ledger
	now     time.Time

	heads    map[int64]*head
	accounts map[string]*acctState // by address
	absent   map[string]bool       // addresses looked up and not found
	idem     map[string]*idemRow
	// wanted are the accounts the commands named before the batch began
	// (WantAccount), read with the head lock.
	wanted map[string]postings.Account

	// Rows to insert, in order; a mark records their lengths so that a
	// failed command can be undone by truncation.
	newAccounts []*acctState
	entries     []*postings.Record
	bills       []billLineRow
	idemRows    []*idemRow
	outbox      []eventRow
	deliveries  []deliveryRow
	// undo restores what cannot be truncated (balances, heads, the rows of
	// the domains' batch states), newest last.
	undo []func()

	// states are the domains' batch states, by kind (batchstate.go).
	states []any

	// trace records what the batch sends, when the ledger has a batch
	// trace hook (tests only; batchtrace.go).
	trace *BatchTrace
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
	newAccounts, entries, bills, idemRows, events, deliveries, undo int
}

// connAcquireTimeout bounds the wait for a database connection while the
// pool is not saturated, that is while connections are being dialled: when
// PostgreSQL is down or recovering, every attempt would otherwise queue
// behind the pool's dials for up to the batch time-out; failing fast lets
// the API answer 503 at once and the client retry with its key.
const connAcquireTimeout = 5 * time.Second

func (l *Ledger) beginState(ctx context.Context) (*Tx, error) {
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
	pg, err := PgxConn(conn)
	if err != nil {
		conn.Close()
		return nil, mapError(err)
	}
	return &Tx{
		ctx:      ctx,
		conn:     conn,
		pg:       pg,
		idb:      conn,
		l:        l,
		now:      l.now(),
		heads:    map[int64]*head{},
		accounts: map[string]*acctState{},
		absent:   map[string]bool{},
		idem:     map[string]*idemRow{},
		wanted:   map[string]postings.Account{},
		states:   make([]any, len(l.kinds)),
	}, nil
}

// Pipeline starts a pipeline on the batch's connection: statements queued
// on it run, in order, in the batch's transaction when it is sent.
func (tx *Tx) Pipeline() *Pipeline {
	p := newPipeline(tx.ctx, tx.pg, tx.l.db)
	p.trace = tx.trace
	return p
}

// Context is the batch's context (its deadline is the batch's, not a
// caller's).
func (tx *Tx) Context() context.Context { return tx.ctx }

// Now is the batch's time: every row the batch writes carries it.
func (tx *Tx) Now() time.Time { return tx.now }

// DB runs bun's queries inside the batch's transaction, for the rare reads
// that are not worth a prepared statement.
func (tx *Tx) DB() bun.IDB { return tx.idb }

// Entries are the journal entries the batch posted so far, in order.
func (tx *Tx) Entries() []*postings.Record { return tx.entries }

// Undo registers fn to run if the current command fails: it restores what
// the command changed in a domain's batch state. The undo functions of a
// failed command run newest first.
func (tx *Tx) Undo(fn func()) { tx.undo = append(tx.undo, fn) }

// Merchant returns the merchant m, whose journal head the batch holds
// locked; ENOTFOUND "merchant" when it has none.
func (tx *Tx) Merchant(m int64) (*Merchant, error) {
	h, err := tx.head(m)
	if err != nil {
		return nil, err
	}
	return &h.merchant, nil
}

// begin queues the start of the batch's transaction. The transaction is
// READ COMMITTED: every row a command decides on is read after the
// merchant's head is locked, and only the writer changes them under it.
func (tx *Tx) begin(p *Pipeline) {
	p.Text("begin isolation level read committed", nil)
	tx.began = true
}

// commitTx commits the batch's transaction. An error means the outcome is
// unknown (the COMMIT may have been applied), except when PostgreSQL
// answered that it rolled back.
func (tx *Tx) commitTx() error {
	ctx, cancel := context.WithTimeout(tx.ctx, tx.l.cfg.CommitTimeout)
	defer cancel()
	tag, err := tx.pg.Exec(ctx, "commit")
	if err != nil {
		tx.unknown = true
		return &outcomeUnknownError{err: err}
	}
	if tx.trace != nil {
		tx.trace.traceSent([]string{"commit"}, []pgconn.CommandTag{tag})
	}
	tx.began = false
	if tag.String() != "COMMIT" {
		// PostgreSQL answers a COMMIT of a failed transaction with ROLLBACK.
		return Invariantf("the batch transaction was rolled back at commit (%s)", tag.String())
	}
	return nil
}

// rollbackTimeout bounds the ROLLBACK of an abandoned batch.
const rollbackTimeout = 5 * time.Second

// discardTimeout bounds the goodbye to a server when a connection is
// discarded: pgx closes the socket when it ends, answered or not.
const discardTimeout = 100 * time.Millisecond

// end rolls back a transaction that is still open and returns the
// connection to the pool. A connection whose COMMIT went unanswered is
// closed instead, never rolled back or reused: its server may be frozen or
// gone (a ROLLBACK would wait rollbackTimeout more on it), and its session's
// state is unknown. A closed pgx connection is not valid, and database/sql
// discards it instead of pooling it again; so is one left inside a
// transaction (the rollback failed).
func (tx *Tx) end() {
	switch {
	case tx.unknown:
		ctx, cancel := context.WithTimeout(context.Background(), discardTimeout)
		_ = tx.pg.Close(ctx)
		cancel()
		// pgx may already have marked it closed when the deadline fired,
		// leaving the socket to a goroutine that sends a cancel request
		// and waits up to 15 s for a silent server: close it now.
		_ = tx.pg.PgConn().Conn().Close()
		tx.began = false
	case tx.began:
		ctx, cancel := context.WithTimeout(context.Background(), rollbackTimeout)
		_, _ = tx.pg.Exec(ctx, "rollback")
		cancel()
		tx.began = false
	}
	_ = tx.conn.Close()
}

func (tx *Tx) mark() mark {
	return mark{len(tx.newAccounts), len(tx.entries), len(tx.bills), len(tx.idemRows), len(tx.outbox), len(tx.deliveries),
		len(tx.undo)}
}

func (tx *Tx) rollback(m mark) {
	for i := len(tx.undo) - 1; i >= m.undo; i-- {
		tx.undo[i]()
	}
	tx.undo = tx.undo[:m.undo]
	for _, a := range tx.newAccounts[m.newAccounts:] {
		delete(tx.accounts, a.account.Address())
	}
	tx.newAccounts = tx.newAccounts[:m.newAccounts]
	tx.entries = tx.entries[:m.entries]
	tx.bills = tx.bills[:m.bills]
	for _, r := range tx.idemRows[m.idemRows:] {
		delete(tx.idem, r.id())
	}
	tx.idemRows = tx.idemRows[:m.idemRows]
	tx.outbox = tx.outbox[:m.events]
	tx.deliveries = tx.deliveries[:m.deliveries]
}

// stmtLockHeads locks the journal heads of the batch's merchants in id
// order, so that two transactions never wait on each other in a cycle: $1
// is sorted (uniqueSorted), and each head is locked by its own probe in the
// order of the array (the function scan is the outer side of the nested
// loops, so it drives them in that order).
var stmtLockHeads = NewStmt(`
	select h.merchant_id, h.last_seq, h.last_hash, h.last_bill_seq, h.last_event_seq, h.last_ts,
	       m.shop_no, m.currencies, coalesce(m.callback_url, '')
	from unnest($1::bigint[]) with ordinality as v(m, i)
	cross join lateral (select * from ledger_heads h where h.merchant_id = v.m for update) h
	cross join lateral (select * from merchants m where m.id = v.m offset 0) m
	order by v.i`)

// queueLockHeads queues the lock of the merchants' heads. Merchants without
// a head are absent from tx.heads; their commands fail alone.
func (tx *Tx) queueLockHeads(p *Pipeline, merchants []int64) {
	p.Query(stmtLockHeads, func(rows pgx.Rows) error {
		for rows.Next() {
			var hash []byte
			h := &head{}
			m := &h.merchant
			if err := rows.Scan(&m.ID, &h.seq, &hash, &h.billSeq, &h.eventSeq, &h.ts,
				&m.ShopNo, &m.Currencies, &m.CallbackURL); err != nil {
				return err
			}
			if len(hash) != len(h.hash) {
				return fmt.Errorf("ledger: head of merchant %d has a %d-byte hash", m.ID, len(hash))
			}
			copy(h.hash[:], hash)
			h.ts = h.ts.UTC()
			tx.heads[m.ID] = h
		}
		return nil
	}, UniqueSorted(merchants))
}

// head returns the locked head of merchant m.
func (tx *Tx) head(m int64) (*head, error) {
	h := tx.heads[m]
	if h == nil {
		return nil, postings.ReasonErrorf(postings.ENOTFOUND, postings.ReasonMerchant, "merchant not found")
	}
	return h, nil
}

// touchHead saves the head for undo before a change.
func (tx *Tx) touchHead(h *head) {
	saved := *h
	tx.undo = append(tx.undo, func() { *h = saved })
	h.dirty = true
}
