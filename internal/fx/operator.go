package fx

import (
	"context"
	"errors"
	"time"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// The operator's changes. They change configuration, never money, so they
// are plain statements outside the writer; a batch reads a rate once, so a
// change applies from the next batch on.

// Set sets the operator's rate from base to quote (one base is mid quote)
// and its spread in basis points.
func (s *Service) Set(ctx context.Context, base, quote, mid string, spreadBps int64) (*Rate, error) {
	for _, c := range []string{base, quote} {
		if _, err := postings.LookupCurrency(c); err != nil {
			// The field is the pair (what the operator typed), not the
			// "currency" LookupCurrency names: WithField keeps a field
			// already named, so it is set here.
			var pe *postings.Error
			if !errors.As(err, &pe) {
				return nil, err
			}
			named := *pe
			named.Field = "pair"
			return nil, &named
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
	// A new version, never a change: the versions an entry names stay
	// what they were (sql/0022 refuses UPDATE and DELETE).
	now := s.l.Now()
	var version int64
	err = s.l.DB().NewRaw(`
		insert into fx_rate_versions (base, quote, mid_rate, spread_bps, source, set_at)
		values (?, ?, ?::numeric, ?, 'operator', ?) returning version`,
		base, quote, r.String(), spreadBps, now).Scan(ctx, &version)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	return &Rate{Version: version, Base: base, Quote: quote, MidRate: r.String(), SpreadBps: spreadBps, Source: "operator",
		UpdatedAt: now, Mid: r}, nil
}

// List lists every rate.
func (s *Service) List(ctx context.Context) ([]Rate, error) {
	var out []Rate
	err := s.l.DB().NewRaw(`select version, base, quote, mid_rate::text as mid_rate, spread_bps, source, set_at as updated_at
		from fx_rate_versions v
		where version = (select max(version) from fx_rate_versions l where l.base = v.base and l.quote = v.quote)
		order by base, quote`).
		Scan(ctx, &out)
	for i := range out {
		out[i].UpdatedAt = out[i].UpdatedAt.UTC()
	}
	return out, ledger.MapError(err)
}

// RestampSeedRates marks the seeded demo rates as current, for a local
// gateway started long after its database was made: each pair whose latest
// version is a seed older than olderThan gets a new seed version of the
// same rate, stamped now (versions are never changed). Operator rates are
// never touched. It returns how many rates it re-stamped.
func (s *Service) RestampSeedRates(ctx context.Context, olderThan time.Duration) (int64, error) {
	now := s.l.Now()
	res, err := s.l.DB().NewRaw(`
		insert into fx_rate_versions (base, quote, mid_rate, spread_bps, source, set_at)
		select base, quote, mid_rate, spread_bps, 'seed', ? from fx_rate_versions v
		where source = 'seed' and set_at < ?
		  and version = (select max(version) from fx_rate_versions l where l.base = v.base and l.quote = v.quote)
		order by base, quote`,
		now, now.Add(-olderThan)).Exec(ctx)
	if err != nil {
		return 0, ledger.MapError(err)
	}
	return res.RowsAffected()
}
