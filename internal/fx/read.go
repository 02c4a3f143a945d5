package fx

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Read returns the rate from base to quote as stored (its latest version),
// whatever its age;
// EFORBIDDEN fx_pair when there is none.
func Read(ctx context.Context, db bun.IDB, base, quote string) (*Rate, error) {
	var r Rate
	// The pair's latest version: one probe of fx_rate_versions_pair_idx.
	err := db.NewRaw(`select version, base, quote, mid_rate::text, spread_bps, source, set_at from fx_rate_versions
		where base = ? and quote = ? order by version desc limit 1`,
		base, quote).Scan(ctx, &r.Version, &r.Base, &r.Quote, &r.MidRate, &r.SpreadBps, &r.Source, &r.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, postings.ReasonErrorf(postings.EFORBIDDEN, postings.ReasonFXPair, "no exchange rate from %s to %s", base, quote)
	}
	if err != nil {
		return nil, ledger.MapError(err)
	}
	if r.Mid, err = postings.ParseRate(r.MidRate); err != nil {
		return nil, ledger.Invariantf("stored rate %s/%s: %v", base, quote, err)
	}
	r.MidRate = r.Mid.String()
	r.UpdatedAt = r.UpdatedAt.UTC()
	return &r, nil
}

// batchRates are the rates a batch read: read once per batch, not once per
// command (an operator's change applies from the next batch).
type batchRates map[string]*Rate

var ratesOf = ledger.NewState(func() batchRates { return batchRates{} })

// Current returns the rate from base to quote as the batch sees it,
// refusing one older than the configured age (ESTATE fx_rate_stale).
func (s *Service) Current(tx *ledger.Tx, base, quote string) (*Rate, error) {
	rates := ratesOf.Of(tx)
	r, ok := rates[base+"/"+quote]
	if !ok {
		var err error
		if r, err = Read(tx.Context(), tx.DB(), base, quote); err != nil {
			return nil, err
		}
		rates[base+"/"+quote] = r
	}
	if age := tx.Now().Sub(r.UpdatedAt); age > s.maxAge {
		return nil, postings.ReasonErrorf(postings.ESTATE, postings.ReasonFXRateStale,
			"the %s/%s rate is %s old, older than the %s allowed", base, quote, age.Round(time.Second), s.maxAge)
	}
	return r, nil
}

// USDFigure converts a limit set in USD minor units into currency to, at
// the operator's mid rate rounded down (a converted limit never exceeds
// the USD one), or, without a rate, as the same number of whole units.
func USDFigure(ctx context.Context, db bun.IDB, minorUSD int64, to postings.Currency) (int64, error) {
	if to.Code == "USD" {
		return minorUSD, nil
	}
	// Without a rate the same number of whole units applies; a failed read
	// is an error, not "no rate".
	rate := postings.RateOne
	fx, err := Read(ctx, db, "USD", to.Code)
	switch {
	case err == nil:
		rate = fx.Mid
	case postings.AsError(err).Reason != postings.ReasonFXPair:
		return 0, err
	}
	v, err := postings.Convert(minorUSD, postings.MustCurrency("USD"), to, rate, postings.RoundDown)
	if postings.ErrorCode(err) == postings.EINVALID {
		return postings.AmountMinorMax, nil // above the largest amount: no bound below it
	}
	return v, err
}
