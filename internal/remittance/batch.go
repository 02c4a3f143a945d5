package remittance

import (
	"database/sql"
	"errors"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/ledger"
)

// batch is the remittances a batch reads and writes, kept like the cards:
// changed in memory with an undo, written by Flush. Remittances are rare
// next to card operations, so their rows are read on demand and their
// statements are bun's, rendered to text in the flush pipeline.
type batch struct {
	remits  map[string]*remitState
	absent  map[string]bool
	newRows []*remitState
	history []remitHistoryRow
}

var batchOf = ledger.NewState(func() *batch {
	return &batch{remits: map[string]*remitState{}, absent: map[string]bool{}}
})

type remitState struct {
	row     remitRow
	history int // steps so far
	isNew   bool
	dirty   bool
}

// remitOf returns the merchant's remittance, or ENOTFOUND "remittance".
func (b *batch) remitOf(tx *ledger.Tx, merchant int64, txID string) (*remitState, error) {
	if s, ok := b.remits[txID]; ok {
		if s.row.MerchantID != merchant {
			return nil, errRemitNotFound()
		}
		return s, nil
	}
	if b.absent[txID] {
		return nil, errRemitNotFound()
	}
	var row remitRow
	ctx, db := tx.Context(), tx.DB()
	err := db.NewSelect().Model(&row).Where("tx_id = ?", txID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		b.absent[txID] = true
		return nil, errRemitNotFound()
	}
	if err != nil {
		return nil, ledger.MapError(err)
	}
	s := &remitState{row: row}
	if err := db.NewRaw(`select count(*) from remittance_history where tx_id = ?`, txID).Scan(ctx, &s.history); err != nil {
		return nil, ledger.MapError(err)
	}
	b.remits[txID] = s
	if row.MerchantID != merchant {
		return nil, errRemitNotFound()
	}
	return s, nil
}

// add puts a new remittance into the batch with its first step, with an
// undo.
func (b *batch) add(tx *ledger.Tx, row remitRow) *remitState {
	s := &remitState{isNew: true, row: row, history: 1}
	n, h := len(b.newRows), len(b.history)
	b.remits[row.TxID] = s
	b.newRows = append(b.newRows, s)
	b.history = append(b.history, remitHistoryRow{TxID: row.TxID, Seq: 1, Status: row.Status, At: tx.Now()})
	tx.Undo(func() {
		delete(b.remits, row.TxID)
		b.newRows, b.history = b.newRows[:n], b.history[:h]
	})
	return s
}

// step records a status in the history, with an undo.
func (b *batch) step(tx *ledger.Tx, s *remitState, status, reason string) {
	saved, savedDirty, savedHist, h := s.row, s.dirty, s.history, len(b.history)
	tx.Undo(func() {
		s.row, s.dirty, s.history = saved, savedDirty, savedHist
		b.history = b.history[:h]
	})
	now := tx.Now()
	s.history++
	s.row.Status, s.row.UpdatedAt, s.dirty = status, now, true
	s.row.Reason = database.NullString(reason)
	s.row.ClaimedUntil = bun.NullTime{}
	b.history = append(b.history, remitHistoryRow{
		TxID: s.row.TxID, Seq: s.history, Status: status, Reason: database.NullString(reason), At: now,
	})
}

// Flush implements ledger.Flusher.
func (b *batch) Flush(p *ledger.Pipeline) {
	db := p.DB()
	if len(b.newRows) > 0 {
		rows := make([]remitRow, len(b.newRows))
		for i, s := range b.newRows {
			rows[i] = s.row
		}
		p.BunExec(db.NewInsert().Model(&rows), nil)
	}
	var changed []remitRow
	for _, s := range b.remits {
		if s.dirty && !s.isNew {
			changed = append(changed, s.row)
		}
	}
	if len(changed) > 0 {
		p.BunExec(db.NewUpdate().With("_data", db.NewValues(&changed)).
			Model((*remitRow)(nil)).TableExpr("_data").
			Set("status = _data.status").Set("reason = _data.reason").Set("next_action_at = _data.next_action_at").
			Set("claimed_until = _data.claimed_until").Set("updated_at = _data.updated_at").Set("settled_at = _data.settled_at").
			Where("r.tx_id = _data.tx_id"), ledger.RowsCheck(len(changed), "remittances"))
	}
	if len(b.history) > 0 {
		p.BunExec(db.NewInsert().Model(&b.history), nil)
	}
}
