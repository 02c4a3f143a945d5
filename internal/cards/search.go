package cards

import (
	"context"

	"github.com/paygate/gateway/ledger"
)

// The console's card search and a merchant's BIN overrides: reads for
// pages, outside the writer, bounded by the caller's limit.

// Search returns the card numbers of merchant matching q (a whole card
// number or the four digits of last4; "" for any) and status ("" for any),
// newest first, at most limit. The console's search box; the API's list is
// ListCards.
func (s *Service) Search(ctx context.Context, merchant int64, q, status string, limit int) ([]string, error) {
	var out []string
	err := s.l.DB().NewRaw(`select card_no from cards
		where merchant_id = ?0 and (?1 = '' or card_no = ?1 or last4 = ?1) and (?2 = '' or status = ?2)
		order by created_at desc, card_no limit ?3`, merchant, q, status, limit).Scan(ctx, &out)
	return out, ledger.MapError(err)
}

// BINAccess is a merchant's explicit access to one BIN entry: an override
// of the default rule (the enabled BINs in the merchant's currencies).
type BINAccess struct {
	BIN      string `bun:"bin"`
	Currency string `bun:"currency"`
	Allowed  bool   `bun:"allowed"`
}

// BINOverrides lists the merchant's explicit BIN access (SetBINAccess), by
// BIN and currency, at most limit.
func (s *Service) BINOverrides(ctx context.Context, merchant int64, limit int) ([]BINAccess, error) {
	var out []BINAccess
	err := s.l.DB().NewRaw(`select bin, currency, allowed from merchant_bins
		where merchant_id = ? order by bin, currency limit ?`, merchant, limit).Scan(ctx, &out)
	return out, ledger.MapError(err)
}
