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
	// cell and cellNumber are the cell this database is (internal/cells):
	// its card numbers carry the name, its PANs the number ("" and 0: the
	// one implicit cell of an installation without cells).
	cell       string
	cellNumber int
}

// InCell makes s mint card numbers (crd_<cell>…) and PANs (the account
// range's first digit) of cell name, number 1–9. Call it once, before the
// service is used (internal/app/services).
func (s *Service) InCell(name string, number int) { s.cell, s.cellNumber = name, number }

// New returns the card domain of l, converting with the rates of fx, with
// the merchants of merchants.
func New(l *ledger.Ledger, rates *fx.Service, merchants *merchant.Service) *Service {
	return &Service{l: l, fx: rates, merchants: merchants, books: audit.New(l)}
}
