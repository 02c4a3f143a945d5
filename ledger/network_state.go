package ledger

import (
	"database/sql"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// The authorizations a batch reads and writes, kept like the cards in
// extState: changed in memory with an undo, written by flush.

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

type networkExt struct {
	auths      map[string]*authState
	authAbsent map[string]bool
	newAuths   []*authState
	attempts   []authAttemptRow
}

type networkMark struct{ newAuths, attempts int }

func (n *networkExt) init() {
	if n.auths == nil {
		n.auths = map[string]*authState{}
		n.authAbsent = map[string]bool{}
	}
}

func (n *networkExt) mark() networkMark { return networkMark{len(n.newAuths), len(n.attempts)} }

func (n *networkExt) rollback(m networkMark) {
	for _, a := range n.newAuths[m.newAuths:] {
		delete(n.auths, a.row.AuthID)
	}
	n.newAuths = n.newAuths[:m.newAuths]
	n.attempts = n.attempts[:m.attempts]
}

// loadAuths reads authorizations by id into the batch.
func (st *state) loadAuths(ids []string) error {
	n := &st.ext.network
	n.init()
	var want []string
	for _, id := range ids {
		if _, ok := n.auths[id]; !ok && !n.authAbsent[id] {
			want = append(want, id)
		}
	}
	if len(want) == 0 {
		return nil
	}
	var rows []authRow
	if err := st.tx.NewSelect().Model(&rows).Where("auth_id = any(?)", pgdialect.Array(want)).Scan(st.ctx); err != nil {
		return mapError(err)
	}
	for i := range rows {
		n.auths[rows[i].AuthID] = &authState{row: rows[i]}
	}
	for _, id := range want {
		if _, ok := n.auths[id]; !ok {
			n.authAbsent[id] = true
		}
	}
	return nil
}

// authOf returns the merchant's authorization, or ENOTFOUND "authorization".
func (st *state) authOf(merchant int64, authID string) (*authState, error) {
	if err := st.loadAuths([]string{authID}); err != nil {
		return nil, err
	}
	a := st.ext.network.auths[authID]
	if a == nil || a.row.MerchantID != merchant {
		return nil, errAuthNotFound()
	}
	return a, nil
}

func (st *state) addAuth(r authRow) *authState {
	n := &st.ext.network
	n.init()
	a := &authState{row: r, isNew: true}
	n.auths[r.AuthID] = a
	delete(n.authAbsent, r.AuthID)
	n.newAuths = append(n.newAuths, a)
	return a
}

func (st *state) changeAuth(a *authState, fn func(r *authRow)) {
	saved, savedDirty := a.row, a.dirty
	st.undo = append(st.undo, func() { a.row, a.dirty = saved, savedDirty })
	fn(&a.row)
	a.row.UpdatedAt = st.now
	a.dirty = true
}

func (n *networkExt) flush(st *state) error {
	if len(n.newAuths) > 0 {
		rows := make([]authRow, len(n.newAuths))
		for i, a := range n.newAuths {
			rows[i] = a.row
		}
		if _, err := st.tx.NewInsert().Model(&rows).Exec(st.ctx); err != nil {
			return mapError(err)
		}
	}
	var changed []authRow
	for _, a := range n.auths {
		if a.dirty && !a.isNew {
			changed = append(changed, a.row)
		}
	}
	if len(changed) > 0 {
		res, err := st.tx.NewUpdate().With("_data", st.tx.NewValues(&changed)).
			Model((*authRow)(nil)).TableExpr("_data").
			Set("held = _data.held").Set("captured = _data.captured").Set("released = _data.released").
			Set("status = _data.status").Set("updated_at = _data.updated_at").
			Where("a.auth_id = _data.auth_id").Exec(st.ctx)
		if err != nil {
			return mapError(err)
		}
		if k, _ := res.RowsAffected(); k != int64(len(changed)) {
			return errInvariant("%d authorizations updated, %d expected", k, len(changed))
		}
	}
	if len(n.attempts) > 0 {
		if _, err := st.tx.NewInsert().Model(&n.attempts).Exec(st.ctx); err != nil {
			return mapError(err)
		}
	}
	return nil
}
