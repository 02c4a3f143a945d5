package console

import (
	"context"
	"time"
)

// The operator pages' own reads, where no domain offers one: a merchant's
// BIN overrides, and the authorization holds that expire soon. Bounded,
// bind parameters only.

// binOverridesMax bounds the overrides read for one merchant (the
// catalogue is a handful of entries).
const binOverridesMax = 1000

// binOverrides maps "bin/currency" to "allow" or "deny" for the merchant's
// explicit BIN access (merchant_bins); an entry without one follows the
// default rule.
func (s *store) binOverrides(ctx context.Context, merchant int64) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, `select bin, currency, allowed from merchant_bins
		where merchant_id = $1 order by bin, currency limit $2`, merchant, binOverridesMax)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var bin, cur string
		var allowed bool
		if err := rows.Scan(&bin, &cur, &allowed); err != nil {
			return nil, err
		}
		out[bin+"/"+cur] = map[bool]string{true: "allow", false: "deny"}[allowed]
	}
	return out, rows.Err()
}

// holdRow is an open authorization hold.
type holdRow struct {
	AuthID    string
	ShopNo    string
	CardNo    string
	Held      int64
	Currency  string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// holdsPageMax bounds a page of holds near expiry (a variable so that a
// test can page with a few).
var holdsPageMax = 100

// holdsExpiring lists the open holds expiring before until, soonest first,
// after the cursor (expiresAt, authID) of the previous page: one range of
// authorizations_expiry_idx (partial, status = 'OPEN').
func (s *store) holdsExpiring(ctx context.Context, until, afterAt time.Time, afterID string) ([]holdRow, error) {
	rows, err := s.db.QueryContext(ctx, `select a.auth_id, m.shop_no, a.card_no, a.held, a.currency, a.created_at, a.expires_at
		from authorizations a join merchants m on m.id = a.merchant_id
		where a.status = 'OPEN' and a.expires_at < $1 and (a.expires_at, a.auth_id) > ($2, $3)
		order by a.expires_at, a.auth_id limit $4`, until, afterAt, afterID, holdsPageMax)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []holdRow
	for rows.Next() {
		var h holdRow
		if err := rows.Scan(&h.AuthID, &h.ShopNo, &h.CardNo, &h.Held, &h.Currency, &h.CreatedAt, &h.ExpiresAt); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}
