package network

import (
	"context"
	"time"

	"github.com/paygate/gateway/ledger"
)

// ExpiringHold is an open authorization hold, for the operator's page of
// holds near expiry.
type ExpiringHold struct {
	AuthID    string    `bun:"auth_id"`
	ShopNo    string    `bun:"shop_no"`
	CardNo    string    `bun:"card_no"`
	Held      int64     `bun:"held"`
	Currency  string    `bun:"currency"`
	CreatedAt time.Time `bun:"created_at"`
	ExpiresAt time.Time `bun:"expires_at"`
}

// HoldsExpiring lists up to limit open holds, across merchants, expiring
// before until, soonest first, after the cursor (afterAt, afterID) of the
// previous page (the zero time and "" for the first): one range of
// authorizations_expiry_idx (partial, status = 'OPEN').
func (s *Service) HoldsExpiring(ctx context.Context, until, afterAt time.Time, afterID string, limit int) ([]ExpiringHold, error) {
	var out []ExpiringHold
	err := s.l.DB().NewRaw(`select a.auth_id, m.shop_no, a.card_no, a.held, a.currency, a.created_at, a.expires_at
		from authorizations a join merchants m on m.id = a.merchant_id
		where a.status = 'OPEN' and a.expires_at < ?::timestamptz and (a.expires_at, a.auth_id) > (?::timestamptz, ?::text)
		order by a.expires_at, a.auth_id limit ?`, until, afterAt, afterID, limit).Scan(ctx, &out)
	return out, ledger.MapError(err)
}
