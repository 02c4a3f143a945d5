package network

import (
	"database/sql"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/ledger"
)

// batch is the network's rows in one batch transaction: the
// authorizations it reads and writes and the attempts it records. Like the
// cards they are changed in memory, each change with a ledger Undo, and
// written by Flush.
type batch struct {
	auths      map[string]*authState
	authAbsent map[string]bool
	newAuths   []*authState
	attempts   []authAttemptRow
	refunds    []refundRow
	// messageMax caches, for the batch, the largest network message of the
	// currencies converted from the USD figure (bounds.go).
	messageMax map[string]int64
	wantAuths  []string // named before the batch began (Load reads them)
}

var batchOf = ledger.NewState(func() *batch {
	return &batch{auths: map[string]*authState{}, authAbsent: map[string]bool{}, messageMax: map[string]int64{}}
})

type authState struct {
	row   authRow
	isNew bool
	dirty bool
}

type authRow struct {
	bun.BaseModel   `bun:"table:authorizations,alias:a"`
	AuthID          string         `bun:"auth_id,pk"`
	MerchantID      int64          `bun:"merchant_id"`
	CardNo          string         `bun:"card_no"`
	MessageID       string         `bun:"message_id"`
	TxnAmount       int64          `bun:"txn_amount"`
	TxnCurrency     string         `bun:"txn_currency"`
	FXRate          sql.NullString `bun:"fx_rate"`
	Amount          int64          `bun:"amount"`
	Fee             int64          `bun:"fee"`
	Currency        string         `bun:"currency"`
	Held            int64          `bun:"held"`
	Captured        int64          `bun:"captured"`
	Released        int64          `bun:"released"`
	TxnReversed     int64          `bun:"txn_reversed"` // reversed so far, transaction currency
	Status          string         `bun:"status"`
	MerchantName    sql.NullString `bun:"merchant_name"`
	MCC             sql.NullString `bun:"mcc"`
	MerchantCountry sql.NullString `bun:"merchant_country"`
	ExpiresAt       time.Time      `bun:"expires_at"`
	CreatedAt       time.Time      `bun:"created_at"`
	UpdatedAt       time.Time      `bun:"updated_at"`
}

type authAttemptRow struct {
	bun.BaseModel   `bun:"table:auth_attempts"`
	MessageID       string         `bun:"message_id"`
	MerchantID      sql.NullInt64  `bun:"merchant_id"`
	CardNo          string         `bun:"card_no"`
	TxnAmount       int64          `bun:"txn_amount"`
	TxnCurrency     string         `bun:"txn_currency"`
	Approved        bool           `bun:"approved"`
	ResponseCode    string         `bun:"response_code"`
	Reason          string         `bun:"reason"`
	AuthID          sql.NullString `bun:"auth_id"`
	MerchantName    sql.NullString `bun:"merchant_name"`
	MCC             sql.NullString `bun:"mcc"`
	MerchantCountry sql.NullString `bun:"merchant_country"`
	CreatedAt       time.Time      `bun:"created_at"`
}

// refundRow is a network refund's message id and its CARD_REFUND entry
// (table network_refunds).
type refundRow struct {
	MessageID   string
	MerchantID  int64
	MerchantSeq int64
	CreatedAt   time.Time
}

// authColumns are the columns of authRow, in its field order.
const authColumns = `auth_id, merchant_id, card_no, message_id, txn_amount, txn_currency, fx_rate, amount, fee,
	currency, held, captured, released, txn_reversed, status, merchant_name, mcc, merchant_country, expires_at, created_at, updated_at`

var stmtLoadAuths = ledger.NewStmt(`select a.* from unnest($1::text[]) as v(auth_id)
	cross join lateral (select ` + authColumns + ` from authorizations a where a.auth_id = v.auth_id offset 0) a`)

// Load implements ledger.Loader.
func (b *batch) Load(_ *ledger.Tx, p *ledger.Pipeline) { b.queueAuths(p, b.wantAuths) }

// queueAuths queues the read of authorizations by id.
func (b *batch) queueAuths(p *ledger.Pipeline, ids []string) {
	var want []string
	for _, id := range ids {
		if _, ok := b.auths[id]; !ok && !b.authAbsent[id] {
			want = append(want, id)
		}
	}
	if len(want) == 0 {
		return
	}
	// One probe per element: no element twice.
	want = ledger.UniqueSorted(want)
	p.Query(stmtLoadAuths, func(rows pgx.Rows) error {
		for rows.Next() {
			var r authRow
			if err := rows.Scan(&r.AuthID, &r.MerchantID, &r.CardNo, &r.MessageID, &r.TxnAmount, &r.TxnCurrency, &r.FXRate,
				&r.Amount, &r.Fee, &r.Currency, &r.Held, &r.Captured, &r.Released, &r.TxnReversed, &r.Status, &r.MerchantName, &r.MCC,
				&r.MerchantCountry, &r.ExpiresAt, &r.CreatedAt, &r.UpdatedAt); err != nil {
				return err
			}
			b.auths[r.AuthID] = &authState{row: r}
		}
		for _, id := range want {
			if _, ok := b.auths[id]; !ok {
				b.authAbsent[id] = true
			}
		}
		return nil
	}, want)
}

// authOf returns the merchant's authorization, or ENOTFOUND "authorization".
func (b *batch) authOf(tx *ledger.Tx, merchant int64, authID string) (*authState, error) {
	p := tx.Pipeline()
	b.queueAuths(p, []string{authID})
	if err := p.Send(); err != nil {
		return nil, err
	}
	a := b.auths[authID]
	if a == nil || a.row.MerchantID != merchant {
		return nil, errAuthNotFound()
	}
	return a, nil
}

func (b *batch) addAuth(tx *ledger.Tx, r authRow) *authState {
	a := &authState{row: r, isNew: true}
	n := len(b.newAuths)
	b.auths[r.AuthID] = a
	delete(b.authAbsent, r.AuthID)
	b.newAuths = append(b.newAuths, a)
	tx.Undo(func() {
		delete(b.auths, r.AuthID)
		b.newAuths = b.newAuths[:n]
	})
	return a
}

func (b *batch) addAttempt(tx *ledger.Tx, r authAttemptRow) {
	n := len(b.attempts)
	b.attempts = append(b.attempts, r)
	tx.Undo(func() { b.attempts = b.attempts[:n] })
}

func (b *batch) addRefund(tx *ledger.Tx, r refundRow) {
	n := len(b.refunds)
	b.refunds = append(b.refunds, r)
	tx.Undo(func() { b.refunds = b.refunds[:n] })
}

func changeAuth(tx *ledger.Tx, a *authState, fn func(r *authRow)) {
	saved, savedDirty := a.row, a.dirty
	tx.Undo(func() { a.row, a.dirty = saved, savedDirty })
	fn(&a.row)
	a.row.UpdatedAt = tx.Now()
	a.dirty = true
}

var stmtInsertAuths = ledger.NewStmt(`
	insert into authorizations (` + authColumns + `)
	select * from unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[],
	                     $8::bigint[], $9::bigint[], $10::text[], $11::bigint[], $12::bigint[], $13::bigint[], $14::bigint[],
	                     $15::text[], $16::text[], $17::text[], $18::text[], $19::timestamptz[], $20::timestamptz[], $21::timestamptz[])`)

var stmtUpdateAuths = ledger.NewStmt(`
	update authorizations a
	set held = v.held, captured = v.captured, released = v.released, txn_reversed = v.txn_reversed, status = v.status,
	    updated_at = v.updated
	from unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::timestamptz[])
	     as v(auth_id, held, captured, released, txn_reversed, status, updated)
	cross join lateral (select ctid from authorizations x where x.auth_id = v.auth_id offset 0) x
	where a.ctid = x.ctid`)

var stmtInsertAttempts = ledger.NewStmt(`
	insert into auth_attempts (message_id, merchant_id, card_no, txn_amount, txn_currency, approved, response_code,
	                           reason, auth_id, merchant_name, mcc, merchant_country, created_at)
	select * from unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::text[], $6::bool[], $7::text[],
	                     $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::timestamptz[])`)

var stmtInsertRefunds = ledger.NewStmt(`
	insert into network_refunds (message_id, merchant_id, merchant_seq, created_at)
	select * from unnest($1::text[], $2::bigint[], $3::bigint[], $4::timestamptz[])`)

// Flush implements ledger.Flusher.
func (n *batch) Flush(p *ledger.Pipeline) {
	if k := len(n.newAuths); k > 0 {
		var (
			ids, cards, msgs, txnCurs, curs, statuses = make([]string, k), make([]string, k), make([]string, k), make([]string, k), make([]string, k), make([]string, k)
			ms, txnAmts, amts, fees                   = make([]int64, k), make([]int64, k), make([]int64, k), make([]int64, k)
			helds, capts, rels, revs                  = make([]int64, k), make([]int64, k), make([]int64, k), make([]int64, k)
			rates, names, mccs, countries             = make([]*string, k), make([]*string, k), make([]*string, k), make([]*string, k)
			expires, created, updated                 = make([]time.Time, k), make([]time.Time, k), make([]time.Time, k)
		)
		for i, a := range n.newAuths {
			r := &a.row
			ids[i], ms[i], cards[i], msgs[i], txnAmts[i], txnCurs[i] = r.AuthID, r.MerchantID, r.CardNo, r.MessageID, r.TxnAmount, r.TxnCurrency
			rates[i], amts[i], fees[i], curs[i] = database.NullText(r.FXRate), r.Amount, r.Fee, r.Currency
			helds[i], capts[i], rels[i], revs[i], statuses[i] = r.Held, r.Captured, r.Released, r.TxnReversed, r.Status
			names[i], mccs[i], countries[i] = database.NullText(r.MerchantName), database.NullText(r.MCC), database.NullText(r.MerchantCountry)
			expires[i], created[i], updated[i] = r.ExpiresAt, r.CreatedAt, r.UpdatedAt
		}
		p.ExecRows(stmtInsertAuths, k, "authorizations", ids, ms, cards, msgs, txnAmts, txnCurs, rates, amts, fees, curs,
			helds, capts, rels, revs, statuses, names, mccs, countries, expires, created, updated)
	}
	var ids, statuses []string
	var helds, capts, rels, revs []int64
	var updated []time.Time
	for _, a := range n.auths {
		if a.dirty && !a.isNew {
			ids, statuses, updated = append(ids, a.row.AuthID), append(statuses, a.row.Status), append(updated, a.row.UpdatedAt)
			helds, capts, rels = append(helds, a.row.Held), append(capts, a.row.Captured), append(rels, a.row.Released)
			revs = append(revs, a.row.TxnReversed)
		}
	}
	if len(ids) > 0 {
		p.ExecRows(stmtUpdateAuths, len(ids), "authorizations", ids, helds, capts, rels, revs, statuses, updated)
	}
	if k := len(n.attempts); k > 0 {
		var (
			msgs, cards, txnCurs, codes, reasons = make([]string, k), make([]string, k), make([]string, k), make([]string, k), make([]string, k)
			ms                                   = make([]*int64, k)
			amts                                 = make([]int64, k)
			approved                             = make([]bool, k)
			authIDs, names, mccs, countries      = make([]*string, k), make([]*string, k), make([]*string, k), make([]*string, k)
			created                              = make([]time.Time, k)
		)
		for i := range n.attempts {
			r := &n.attempts[i]
			msgs[i], cards[i], amts[i], txnCurs[i], approved[i], codes[i], reasons[i] = r.MessageID, r.CardNo, r.TxnAmount, r.TxnCurrency, r.Approved, r.ResponseCode, r.Reason
			if r.MerchantID.Valid {
				m := r.MerchantID.Int64
				ms[i] = &m
			}
			authIDs[i], names[i], mccs[i], countries[i] = database.NullText(r.AuthID), database.NullText(r.MerchantName), database.NullText(r.MCC), database.NullText(r.MerchantCountry)
			created[i] = r.CreatedAt
		}
		p.ExecRows(stmtInsertAttempts, k, "authorization attempts", msgs, ms, cards, amts, txnCurs, approved, codes, reasons,
			authIDs, names, mccs, countries, created)
	}
	n.flushRefunds(p)
}

// flushRefunds writes the refunds' message ids (refund.go).
func (n *batch) flushRefunds(p *ledger.Pipeline) {
	k := len(n.refunds)
	if k == 0 {
		return
	}
	msgs, ms, seqs, created := make([]string, k), make([]int64, k), make([]int64, k), make([]time.Time, k)
	for i, r := range n.refunds {
		msgs[i], ms[i], seqs[i], created[i] = r.MessageID, r.MerchantID, r.MerchantSeq, r.CreatedAt
	}
	p.ExecRows(stmtInsertRefunds, k, "network refunds", msgs, ms, seqs, created)
}
