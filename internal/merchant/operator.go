package merchant

import (
	"context"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Operator changes to merchant settings. They change configuration, never
// money, so they are plain statements outside the writer; the writer reads
// the merchant under its head lock, so a change applies from the next batch
// on. The domains' settings (BINs, limits, FX rates) are the domains'.

// SetMerchantStatus enables (ACTIVE) or disables (DISABLED) a merchant.
func (s *Service) SetMerchantStatus(ctx context.Context, merchant int64, status string) error {
	if status != Active && status != Disabled {
		return postings.FieldErrorf("status", "must be ACTIVE or DISABLED")
	}
	return s.updateMerchant(ctx, merchant, "status = ?", status)
}

// SetIPWhitelist replaces a merchant's whitelist (addresses and CIDR
// prefixes; empty allows every address).
func (s *Service) SetIPWhitelist(ctx context.Context, merchant int64, list []string) error {
	wl, err := NormalizeIPWhitelist(list)
	if err != nil {
		return err
	}
	return s.updateMerchant(ctx, merchant, "ip_whitelist = ?", pgdialect.Array(wl))
}

// SetCallbackURL sets the merchant's default callback URL ("" removes it).
func (s *Service) SetCallbackURL(ctx context.Context, merchant int64, url string) error {
	if len(url) > 2048 {
		return postings.FieldErrorf("callback_url", "is longer than 2048 bytes")
	}
	return s.updateMerchant(ctx, merchant, "callback_url = nullif(?, '')", url)
}

func (s *Service) updateMerchant(ctx context.Context, merchant int64, set string, arg any) error {
	defer s.auth.forget(merchant)
	res, err := s.l.DB().NewRaw(`update merchants set `+set+` where id = ?`, arg, merchant).Exec(ctx)
	if err != nil {
		return ledger.MapError(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return postings.ReasonErrorf(postings.ENOTFOUND, postings.ReasonMerchant, "merchant not found")
	}
	return nil
}
