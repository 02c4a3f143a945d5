package adjustment

import (
	"context"
	"database/sql"
	"errors"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Approve posts the proposal's ADJUSTMENT entry and marks it APPROVED, in
// one batch transaction under the merchant's journal head lock: the
// proposal's row is read there, locked (FOR UPDATE, so a rejection waits),
// so two approvals — a double click, two checkers at once, two gateways —
// post one entry. The later ones answer the approved proposal, as a
// replay does. Refused: the proposer approving (whatever the session), a
// proposal decided or expired, an entry already reversed, and an entry
// that would take the funding account below zero (EINSUFFICIENT, in
// words).
func (s *Service) Approve(ctx context.Context, actor Actor, merchant, id int64) (*Proposal, error) {
	p, err := s.Get(ctx, merchant, id)
	if err != nil {
		return nil, err
	}
	if p.Status == StatusApproved {
		return p, nil
	}
	if err := checker(actor, p); err != nil {
		return nil, err
	}
	e, err := s.entry(ctx, p)
	if err != nil {
		return nil, err
	}
	return ledger.Do(ctx, s.l, nil, nil, &ledger.Func[Proposal]{Merchant: merchant,
		Run: func(tx *ledger.Tx, _ *ledger.Merchant) (*Proposal, error) { return approve(tx, actor, merchant, id, e) }})
}

// approve decides under the lock, with what the batch already did.
func approve(tx *ledger.Tx, actor Actor, merchant, id int64, e postings.Entry) (*Proposal, error) {
	b := batchOf.Of(tx)
	r, err := b.row(tx, merchant, id)
	if err != nil {
		return nil, err
	}
	p := r.proposal(tx.Now())
	if p.Status == StatusApproved {
		return p, nil // approved meanwhile: the same entry, once
	}
	if err := checker(actor, p); err != nil {
		return nil, err
	}
	if p.Status == StatusExpired {
		return nil, expired(p)
	}
	if p.Mode == ModeReversal {
		by, err := b.reversedBy(tx, merchant, p.ReversesSeq)
		if err != nil || by != 0 {
			return nil, alreadyReversed(p.ReversesSeq, by, err)
		}
	}
	rec, err := tx.Post(e)
	if err != nil {
		return nil, belowZero(p, err)
	}
	b.approve(tx, r, actor, rec.Seq)
	return r.proposal(tx.Now()), nil
}

// belowZero words the ledger's EINSUFFICIENT for an adjustment.
func belowZero(p *Proposal, err error) error {
	if postings.ErrorCode(err) != postings.EINSUFFICIENT {
		return err
	}
	what := "this adjustment"
	if p.Mode == ModeReversal {
		what = "reversing entry " + itoa(p.ReversesSeq)
	}
	return &postings.Error{Code: postings.EINSUFFICIENT, Reason: postings.AsError(err).Reason,
		Message: what + " would take the merchant's funding account below zero: " + postings.AsError(err).Message}
}

// batch is the adjustments a batch read and approved.
type batch struct {
	rows     map[int64]*row
	approved []*row
}

var batchOf = ledger.NewState(func() *batch { return &batch{rows: map[int64]*row{}} })

// Domain is what the adjustments bring to the journal core
// (internal/domains).
var Domain = ledger.Domain{Name: "adjustment", States: []ledger.StateKind{batchOf}, Tables: []string{"adjustments"},
	Constraints: map[string]*postings.Error{
		"adjustments_reversal_once": {Code: postings.ESTATE, Field: "reverses", Message: "the entry is already reversed"},
		"adjustments_checker_check": {Code: postings.EFORBIDDEN, Message: "maker–checker: the proposer cannot decide"},
	}}

// row reads the merchant's adjustment id once per batch, locked.
func (b *batch) row(tx *ledger.Tx, merchant, id int64) (*row, error) {
	if r, ok := b.rows[id]; ok {
		if r.MerchantID != merchant {
			return nil, errNotFound()
		}
		return r, nil
	}
	r := new(row)
	err := tx.DB().NewSelect().Model(r).Where("a.id = ?", id).For("update").Scan(tx.Context())
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNotFound()
	}
	if err != nil {
		return nil, ledger.MapError(err)
	}
	b.rows[id] = r
	if r.MerchantID != merchant {
		return nil, errNotFound()
	}
	return r, nil
}

// reversedBy is the adjustment, approved before or in this batch, that
// reversed the entry.
func (b *batch) reversedBy(tx *ledger.Tx, merchant, seq int64) (int64, error) {
	for _, r := range b.approved {
		if r.MerchantID == merchant && r.ReversesSeq.Int64 == seq {
			return r.ID, nil
		}
	}
	return reversedBy(tx.Context(), tx.DB(), merchant, seq)
}

// approve marks r approved with its entry, undone if the command fails.
func (b *batch) approve(tx *ledger.Tx, r *row, actor Actor, seq int64) {
	old, n := *r, len(b.approved)
	r.Status = StatusApproved
	r.DecidedBy = sql.NullInt64{Int64: actor.UserID, Valid: true}
	r.DecidedLogin = sql.NullString{String: actor.Login, Valid: true}
	r.DecidedAt.Time = tx.Now()
	r.EntrySeq = sql.NullInt64{Int64: seq, Valid: true}
	b.approved = append(b.approved, r)
	tx.Undo(func() { *r, b.approved = old, b.approved[:n] })
}

// Flush writes the approvals (ledger.Flusher).
func (b *batch) Flush(p *ledger.Pipeline) {
	if len(b.approved) == 0 {
		return
	}
	db := p.DB()
	rows := make([]row, len(b.approved))
	for i, r := range b.approved {
		rows[i] = *r
	}
	p.BunExec(db.NewUpdate().With("_data", db.NewValues(&rows)).Model((*row)(nil)).TableExpr("_data").
		Set("status = _data.status").Set("decided_by = _data.decided_by").Set("decided_login = _data.decided_login").
		Set("decided_at = _data.decided_at").Set("entry_seq = _data.entry_seq").
		Where("a.id = _data.id and a.status = 'PROPOSED'"), ledger.RowsCheck(len(rows), "adjustments"))
}
