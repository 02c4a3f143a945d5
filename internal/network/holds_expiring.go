package network

import (
	"context"
	"time"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
)

// ExpiringHold is an open authorization hold, for the operator's page of
// holds near expiry.
type ExpiringHold struct {
	AuthID    string    `bun:"auth_id"`
	ShopNo    string    `bun:"-"` // the merchant's (merchant.Briefs)
	Merchant  int64     `bun:"merchant_id"`
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
	err := s.l.DB().NewRaw(`select a.auth_id, a.merchant_id, a.card_no, a.held, a.currency, a.created_at, a.expires_at
		from authorizations a
		where a.status = 'OPEN' and a.expires_at < ?::timestamptz and (a.expires_at, a.auth_id) > (?::timestamptz, ?::text)
		order by a.expires_at, a.auth_id limit ?`, until, afterAt, afterID, limit).Scan(ctx, &out)
	if err != nil || len(out) == 0 {
		return out, ledger.MapError(err)
	}
	// One batch read for the page: the merchants are internal/merchant's.
	err = merchant.NameShops(ctx, s.l.DB(), out, func(h *ExpiringHold) int64 { return h.Merchant },
		func(h *ExpiringHold, shop string) { h.ShopNo = shop })
	return out, err
}
