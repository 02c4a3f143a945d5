package ledger

import (
	"context"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/postings"
)

// Operator changes: merchant settings, the BIN catalogue, access to it and
// FX rates. They change configuration, never money, so they are plain
// statements outside the writer; the writer reads them under the merchant's
// head lock, so a change applies from the next batch on.

// SetMerchantStatus enables (ACTIVE) or disables (DISABLED) a merchant.
func (l *Ledger) SetMerchantStatus(ctx context.Context, merchant int64, status string) error {
	if status != MerchantActive && status != MerchantDisabled {
		return postings.FieldErrorf("status", "must be ACTIVE or DISABLED")
	}
	return l.updateMerchant(ctx, merchant, "status = ?", status)
}

// SetIPWhitelist replaces a merchant's whitelist (addresses and CIDR
// prefixes; empty allows every address).
func (l *Ledger) SetIPWhitelist(ctx context.Context, merchant int64, list []string) error {
	wl, err := NormalizeIPWhitelist(list)
	if err != nil {
		return err
	}
	return l.updateMerchant(ctx, merchant, "ip_whitelist = ?", pgdialect.Array(wl))
}

// SetCallbackURL sets the merchant's default callback URL ("" removes it).
func (l *Ledger) SetCallbackURL(ctx context.Context, merchant int64, url string) error {
	if len(url) > 2048 {
		return postings.FieldErrorf("callback_url", "is longer than 2048 bytes")
	}
	return l.updateMerchant(ctx, merchant, "callback_url = nullif(?, '')", url)
}

// SetKYBTier sets a merchant's KYB tier and resets its limits in every
// currency to the tier's defaults.
func (l *Ledger) SetKYBTier(ctx context.Context, merchant int64, tier string) error {
	if _, ok := tierLimitsUSD[tier]; !ok {
		return postings.FieldErrorf("tier", "must be one of TIER_1, TIER_2, TIER_3")
	}
	defer l.auth.forget(merchant)
	return l.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var currencies []string
		err := tx.NewRaw(`update merchants set kyb_tier = ? where id = ? returning currencies`, tier, merchant).
			Scan(ctx, pgdialect.Array(&currencies))
		if err != nil {
			return MapError(err)
		}
		return resetLimits(ctx, tx, merchant, tier, currencies)
	})
}

// SetLimit sets a merchant's limits in one currency, in minor units.
func (l *Ledger) SetLimit(ctx context.Context, merchant int64, currency string, cardBalanceMax, dailyCardIssueMax int64) error {
	if _, err := postings.LookupCurrency(currency); err != nil {
		return err
	}
	if cardBalanceMax < 0 || dailyCardIssueMax < 0 {
		return postings.FieldErrorf("limit", "limits cannot be negative")
	}
	_, err := l.db.NewRaw(`
		insert into merchant_limits (merchant_id, currency, card_balance_max, daily_card_issue_max)
		values (?, ?, ?, ?)
		on conflict (merchant_id, currency) do update
		set card_balance_max = excluded.card_balance_max, daily_card_issue_max = excluded.daily_card_issue_max`,
		merchant, currency, cardBalanceMax, dailyCardIssueMax).Exec(ctx)
	return MapError(err)
}

func (l *Ledger) updateMerchant(ctx context.Context, merchant int64, set string, arg any) error {
	defer l.auth.forget(merchant)
	res, err := l.db.NewRaw(`update merchants set `+set+` where id = ?`, arg, merchant).Exec(ctx)
	if err != nil {
		return MapError(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return postings.ReasonErrorf(postings.ENOTFOUND, postings.ReasonMerchant, "merchant not found")
	}
	return nil
}

// Card networks of the BIN catalogue.
var binNetworks = map[string]bool{"VISA": true, "MASTERCARD": true}

// UpsertBIN adds a BIN entry to the catalogue or changes its network and
// whether it is enabled.
func (l *Ledger) UpsertBIN(ctx context.Context, b BIN) error {
	if len(b.Bin) < 6 || len(b.Bin) > 8 || strings.Trim(b.Bin, "0123456789") != "" {
		return postings.FieldErrorf("bin", "must be 6 to 8 digits")
	}
	if _, err := postings.LookupCurrency(b.Currency); err != nil {
		return err
	}
	if !binNetworks[b.Network] {
		return postings.FieldErrorf("network", "must be VISA or MASTERCARD")
	}
	_, err := l.db.NewRaw(`
		insert into bins (bin, currency, network, enabled) values (?, ?, ?, ?)
		on conflict (bin, currency) do update set network = excluded.network, enabled = excluded.enabled`,
		b.Bin, b.Currency, b.Network, b.Enabled).Exec(ctx)
	return MapError(err)
}

// BINs lists the whole catalogue.
func (l *Ledger) BINs(ctx context.Context) ([]BIN, error) {
	var out []BIN
	err := l.db.NewRaw(`select bin, currency, network, type, enabled from bins order by network, bin, currency`).
		Scan(ctx, &out)
	return out, MapError(err)
}

// SetBINAccess opens (allowed true) or closes (false) a BIN entry for one
// merchant; nil removes the override, back to the default rule (the enabled
// BINs in the merchant's currencies).
func (l *Ledger) SetBINAccess(ctx context.Context, merchant int64, bin, currency string, allowed *bool) error {
	if allowed == nil {
		_, err := l.db.NewRaw(`delete from merchant_bins where merchant_id = ? and bin = ? and currency = ?`,
			merchant, bin, currency).Exec(ctx)
		return MapError(err)
	}
	_, err := l.db.NewRaw(`
		insert into merchant_bins (merchant_id, bin, currency, allowed) values (?, ?, ?, ?)
		on conflict (merchant_id, bin, currency) do update set allowed = excluded.allowed`,
		merchant, bin, currency, *allowed).Exec(ctx)
	return MapError(err)
}

// SetFXRate sets the operator's rate from base to quote (one base is mid
// quote) and its spread in basis points.
func (l *Ledger) SetFXRate(ctx context.Context, base, quote, mid string, spreadBps int64) (*FXRate, error) {
	for _, c := range []string{base, quote} {
		if _, err := postings.LookupCurrency(c); err != nil {
			return nil, postings.WithField(err, "pair")
		}
	}
	if base == quote {
		return nil, postings.FieldErrorf("pair", "needs two different currencies")
	}
	r, err := postings.ParseRate(mid)
	if err != nil {
		return nil, err
	}
	if _, err := postings.ApplySpread(r, spreadBps, postings.RoundDown); err != nil {
		return nil, err
	}
	now := l.now()
	_, err = l.db.NewRaw(`
		insert into fx_rates (base, quote, mid_rate, spread_bps, source, updated_at)
		values (?, ?, ?::numeric, ?, 'operator', ?)
		on conflict (base, quote) do update
		set mid_rate = excluded.mid_rate, spread_bps = excluded.spread_bps, source = 'operator', updated_at = excluded.updated_at`,
		base, quote, r.String(), spreadBps, now).Exec(ctx)
	if err != nil {
		return nil, MapError(err)
	}
	return &FXRate{Base: base, Quote: quote, MidRate: r.String(), SpreadBps: spreadBps, Source: "operator", UpdatedAt: now}, nil
}

// FXRates lists every rate.
func (l *Ledger) FXRates(ctx context.Context) ([]FXRate, error) {
	var out []FXRate
	err := l.db.NewRaw(`select base, quote, mid_rate::text as mid_rate, spread_bps, source, updated_at from fx_rates order by base, quote`).
		Scan(ctx, &out)
	for i := range out {
		out[i].UpdatedAt = out[i].UpdatedAt.UTC()
	}
	return out, MapError(err)
}

// RestampSeedRates marks the seeded demo rates as current, for a local
// gateway started long after its database was made. Operator rates are
// never touched. It returns how many rates it re-stamped.
func (l *Ledger) RestampSeedRates(ctx context.Context, olderThan time.Duration) (int64, error) {
	now := l.now()
	res, err := l.db.NewRaw(`update fx_rates set updated_at = ? where source = 'seed' and updated_at < ?`,
		now, now.Add(-olderThan)).Exec(ctx)
	if err != nil {
		return 0, MapError(err)
	}
	return res.RowsAffected()
}
