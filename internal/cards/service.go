package cards

import (
	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/fx"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
)

// Service is the card domain on a ledger.
type Service struct {
	l  *ledger.Ledger
	fx *fx.Service
	// merchants are read for the profile, told of a change of tier, and
	// seal the PANs (their Sealer).
	merchants *merchant.Service
	// books reads the merchant's funding balances for the profile.
	books *audit.Service
	// owners caches the merchant of each card (network messages).
	owners owners
	// panSource draws a new card's PAN; nil is newPAN. Tests replace it
	// to force a collision.
	panSource func(bin string) string
}

// New returns the card domain of l, converting with the rates of fx, with
// the merchants of merchants.
func New(l *ledger.Ledger, rates *fx.Service, merchants *merchant.Service) *Service {
	return &Service{l: l, fx: rates, merchants: merchants, books: audit.New(l)}
}
