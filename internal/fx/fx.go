// Package fx holds the operator's exchange rates: one mid rate and spread
// per ordered currency pair, set by the operator, read by the card domain
// (transfers across currencies, limits set in USD) and the network
// (authorizations in another currency than the card's), and refused when
// older than the configured age. The arithmetic of conversion is postings';
// this package only stores, reads and dates the rates.
package fx

import (
	"time"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Rate is an operator rate: one unit of Base is MidRate units of Quote. It
// is one version of the pair's rate (sql/0022: fx_rate_versions, append
// only): a new rate is a new version, and the pair's rate is its latest.
type Rate struct {
	Version   int64     `json:"version"`
	Base      string    `json:"base"`
	Quote     string    `json:"quote"`
	MidRate   string    `json:"midRate"`
	SpreadBps int64     `json:"spreadBps"`
	Source    string    `json:"source"`    // "seed" or "operator"
	UpdatedAt time.Time `json:"updatedAt"` // the version's time
	// Mid is MidRate parsed (set by the reads of this package).
	Mid postings.Rate `json:"-" bun:"-"`
}

// RateMaxAgeDefault is the age beyond which a rate is refused by default.
const RateMaxAgeDefault = 24 * time.Hour

// Service reads and sets the rates.
type Service struct {
	l      *ledger.Ledger
	maxAge time.Duration
}

// New returns the rates of l's database; a rate older than maxAge is
// refused (ESTATE fx_rate_stale). maxAge ≤ 0 means RateMaxAgeDefault.
func New(l *ledger.Ledger, maxAge time.Duration) *Service {
	if maxAge <= 0 {
		maxAge = RateMaxAgeDefault
	}
	return &Service{l: l, maxAge: maxAge}
}
