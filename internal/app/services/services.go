// Package services builds the gateway's merchants and domains on one
// ledger: the one constructor that serve, the operator's commands (through
// internal/app) and the tests above the core (through internal/gatewaytest)
// call, so that a domain added here is in all three. It is a package of its
// own, below internal/app, because api's tests build the domains and app
// imports api: the constructor must not.
package services

import (
	"time"

	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/fx"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
)

// Services are the gateway's merchants and domains built on one ledger: the
// wiring of docs/architecture.md. The ledger and the merchants are
// embedded: their operations read as s.Deposit and s.CreateMerchant, the
// domains' as s.Cards.CreateCard.
type Services struct {
	*ledger.Ledger
	*Merchants
	FX         *fx.Service
	Cards      *cards.Service
	Network    *network.Service
	Remit      *remittance.Service
	Deliveries *delivery.Store
	Bills      *bill.Service
}

// Merchants names the embedded merchant service of Services.
type Merchants = merchant.Service

// Settings are what the domains take, as plain values (the configuration's
// GATEWAY_FX_RATE_MAX_AGE, GATEWAY_HOLD_EXPIRY and GATEWAY_NETWORK_*). The
// zero value gives each domain's defaults.
type Settings struct {
	// FXRateMaxAge is the age beyond which a rate is refused.
	FXRateMaxAge time.Duration
	// Network configures the network side.
	Network network.Config
	// CellName and CellNumber are the cell this database is
	// (internal/cells): the ids, shop numbers and PANs it mints carry
	// them. "" and 0, the default, mint exactly as without cells.
	CellName   string
	CellNumber int
}

// New builds the merchants, whose keys sealer seals (nil: none can be
// created or rolled, as for an auditor's reads), and the domains on l.
func New(l *ledger.Ledger, sealer *merchant.Sealer, s Settings) *Services {
	ms := merchant.New(l, sealer)
	rates := fx.New(l, s.FXRateMaxAge)
	c := cards.New(l, rates, ms)
	if s.CellName != "" {
		ms.InCell(s.CellNumber)
		c.InCell(s.CellName, s.CellNumber)
		s.Network.Cell = s.CellName
	}
	remit := remittance.New(l)
	if s.CellName != "" {
		remit.InCell(s.CellName)
	}
	return &Services{
		Ledger:     l,
		Merchants:  ms,
		FX:         rates,
		Cards:      c,
		Network:    network.New(l, c, rates, s.Network),
		Remit:      remit,
		Deliveries: delivery.NewStore(l, sealer),
		Bills:      bill.New(l),
	}
}

// Close writes the merchants' pending authentication times, then stops the
// ledger's writer.
func (s *Services) Close() {
	s.Merchants.Close()
	s.Ledger.Close()
}
