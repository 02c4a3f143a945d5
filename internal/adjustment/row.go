package adjustment

import (
	"database/sql"
	"strconv"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/postings"
)

// row is one adjustments row (sql: adjustments).
type row struct {
	bun.BaseModel `bun:"table:adjustments,alias:a"`
	ID            int64          `bun:"id,pk,autoincrement"`
	MerchantID    int64          `bun:"merchant_id"`
	Mode          string         `bun:"mode"`
	ReversesSeq   sql.NullInt64  `bun:"reverses_seq"`
	House         sql.NullString `bun:"house_account"`
	Direction     sql.NullString `bun:"direction"`
	Amount        sql.NullInt64  `bun:"amount"`
	Currency      sql.NullString `bun:"currency"`
	Reason        string         `bun:"reason"`
	Reference     string         `bun:"reference"`
	Status        string         `bun:"status"`
	ProposedBy    int64          `bun:"proposed_by"`
	ProposedLogin string         `bun:"proposed_login"`
	ProposedAt    time.Time      `bun:"proposed_at"`
	ExpiresAt     time.Time      `bun:"expires_at"`
	DecidedBy     sql.NullInt64  `bun:"decided_by"`
	DecidedLogin  sql.NullString `bun:"decided_login"`
	DecidedAt     bun.NullTime   `bun:"decided_at"`
	EntrySeq      sql.NullInt64  `bun:"entry_seq"`
}

// proposal is the row as shown at now: a PROPOSED row past its expiry is
// EXPIRED.
func (r *row) proposal(now time.Time) *Proposal {
	p := &Proposal{ID: r.ID, Merchant: r.MerchantID, Mode: r.Mode, ReversesSeq: r.ReversesSeq.Int64, House: r.House.String,
		Direction: r.Direction.String, Reason: r.Reason, Reference: r.Reference, Status: r.Status,
		ProposedBy: r.ProposedLogin, ProposedAt: r.ProposedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC(),
		DecidedBy: r.DecidedLogin.String, EntrySeq: r.EntrySeq.Int64, proposerID: r.ProposedBy}
	if r.Amount.Valid {
		if cur, err := postings.LookupCurrency(r.Currency.String); err == nil {
			p.Amount = &postings.Money{Minor: r.Amount.Int64, Currency: cur}
		}
	}
	if !r.DecidedAt.IsZero() {
		at := r.DecidedAt.Time.UTC()
		p.DecidedAt = &at
	}
	if p.Status == StatusProposed && !now.Before(r.ExpiresAt) {
		p.Status = StatusExpired
	}
	return p
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
