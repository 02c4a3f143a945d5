package adjustment

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Service proposes, approves, rejects and lists adjustments.
type Service struct {
	l  *ledger.Ledger
	db bun.IDB
}

// New is the service on the ledger's database.
func New(l *ledger.Ledger) *Service { return &Service{l: l, db: l.DB()} }

// ListMax bounds a list.
const ListMax = 500

// errNotFound is the answer for an adjustment that does not exist or is
// another merchant's: the two look the same.
func errNotFound() error {
	return &postings.Error{Code: postings.ENOTFOUND, Field: "id", Message: "no such adjustment for this merchant"}
}

// Propose records a proposal. Nothing moves until a different house user
// approves it. A reversal's entry must exist, be reversible and not be
// reversed already; the approval checks all of it again.
func (s *Service) Propose(ctx context.Context, actor Actor, in ProposeInput) (*Proposal, error) {
	if actor.UserID <= 0 || actor.Login == "" {
		return nil, postings.Errorf(postings.EFORBIDDEN, "an adjustment is proposed by a house user")
	}
	if err := in.check(); err != nil {
		return nil, err
	}
	now := s.l.Now()
	r := row{MerchantID: in.Merchant, Reason: in.Reason, Reference: in.Reference, Status: StatusProposed,
		ProposedBy: actor.UserID, ProposedLogin: actor.Login, ProposedAt: now, ExpiresAt: now.Add(ProposalTTL)}
	if in.Reverses != 0 {
		if _, err := s.reversal(ctx, &Proposal{Merchant: in.Merchant, Mode: ModeReversal, ReversesSeq: in.Reverses}); err != nil {
			return nil, err
		}
		if by, err := reversedBy(ctx, s.db, in.Merchant, in.Reverses); err != nil || by != 0 {
			return nil, alreadyReversed(in.Reverses, by, err)
		}
		r.Mode, r.ReversesSeq = ModeReversal, sql.NullInt64{Int64: in.Reverses, Valid: true}
	} else {
		r.Mode = ModeFree
		r.House = sql.NullString{String: in.House, Valid: true}
		r.Direction = sql.NullString{String: in.Direction, Valid: true}
		r.Amount = sql.NullInt64{Int64: in.Amount, Valid: true}
		r.Currency = sql.NullString{String: in.Currency, Valid: true}
	}
	if _, err := s.db.NewInsert().Model(&r).Returning("id").Exec(ctx); err != nil {
		return nil, ledger.MapError(err)
	}
	return r.proposal(now), nil
}

// reversedBy is the approved adjustment that reversed the merchant's entry
// seq, or 0.
func reversedBy(ctx context.Context, db bun.IDB, merchant, seq int64) (int64, error) {
	var id int64
	err := db.NewRaw(`select id from adjustments where merchant_id = ? and reverses_seq = ? and status = 'APPROVED'`,
		merchant, seq).Scan(ctx, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return id, ledger.MapError(err)
}

func alreadyReversed(seq, by int64, err error) error {
	if err != nil {
		return err
	}
	return &postings.Error{Code: postings.ESTATE, Field: "reverses",
		Message: "entry " + itoa(seq) + " is already reversed, by adjustment " + itoa(by) + "; an entry is reversed once"}
}

// Get is the merchant's adjustment id.
func (s *Service) Get(ctx context.Context, merchant, id int64) (*Proposal, error) {
	var r row
	err := s.db.NewSelect().Model(&r).Where("a.id = ? and a.merchant_id = ?", id, merchant).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNotFound()
	}
	if err != nil {
		return nil, ledger.MapError(err)
	}
	return r.proposal(s.l.Now()), nil
}

// List is a page of adjustments, newest first, of one merchant or
// (merchant 0) all: those with an id below before (0: from the newest), at
// most limit (1 to ListMax). The next page passes the last id listed as
// before: keyset paging on the primary key, so a page costs the same at
// any depth and a proposal made meanwhile neither repeats nor hides one.
func (s *Service) List(ctx context.Context, merchant, before int64, limit int) ([]*Proposal, error) {
	if before < 0 {
		return nil, postings.FieldErrorf("before", "must be an adjustment id (1 or more), or 0 for the newest")
	}
	var rows []row
	q := s.db.NewSelect().Model(&rows).OrderExpr("a.id desc").Limit(min(max(limit, 1), ListMax))
	if merchant != 0 {
		q = q.Where("a.merchant_id = ?", merchant)
	}
	if before != 0 {
		q = q.Where("a.id < ?", before)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, ledger.MapError(err)
	}
	now := s.l.Now()
	out := make([]*Proposal, len(rows))
	for i := range rows {
		out[i] = rows[i].proposal(now)
	}
	return out, nil
}

// Reject closes a proposal without posting anything. The checker is not
// the proposer, as for an approval; an expired proposal may still be
// rejected (it says so for the record).
func (s *Service) Reject(ctx context.Context, actor Actor, merchant, id int64) (*Proposal, error) {
	p, err := s.Get(ctx, merchant, id)
	if err != nil {
		return nil, err
	}
	if err := checker(actor, p); err != nil {
		return nil, err
	}
	now := s.l.Now()
	var r row
	err = s.db.NewRaw(`update adjustments set status = 'REJECTED', decided_by = ?, decided_login = ?, decided_at = ?
		where id = ? and merchant_id = ? and status = 'PROPOSED' returning *`, actor.UserID, actor.Login, now, id, merchant).
		Scan(ctx, &r)
	if errors.Is(err, sql.ErrNoRows) { // decided meanwhile
		p, err := s.Get(ctx, merchant, id)
		if err != nil {
			return nil, err
		}
		return nil, decided(p)
	}
	if err != nil {
		return nil, ledger.MapError(err)
	}
	return r.proposal(now), nil
}

// checker refuses a decision on a proposal that is not open, or by its
// proposer.
func checker(actor Actor, p *Proposal) error {
	if actor.UserID <= 0 || actor.Login == "" {
		return postings.Errorf(postings.EFORBIDDEN, "an adjustment is decided by a house user")
	}
	if p.Status == StatusApproved || p.Status == StatusRejected {
		return decided(p)
	}
	if actor.UserID == p.proposerID {
		return &postings.Error{Code: postings.EFORBIDDEN, Message: "maker–checker: " + p.ProposedBy +
			" proposed adjustment " + itoa(p.ID) + " and cannot decide it; another house user must"}
	}
	return nil
}

func decided(p *Proposal) error {
	return &postings.Error{Code: postings.ESTATE, Message: "adjustment " + itoa(p.ID) + " is already " +
		p.Status + " by " + p.DecidedBy}
}

func expired(p *Proposal) error {
	return &postings.Error{Code: postings.ESTATE, Message: "adjustment " + itoa(p.ID) + " expired at " +
		p.ExpiresAt.Format(time.RFC3339) + " undecided; propose it again"}
}
