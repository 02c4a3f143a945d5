package main

import (
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/fx"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
)

// services are the gateway's domains built on one ledger: the wiring of
// docs/architecture.md. The ledger is embedded: its own operations
// (merchants, deposits, bills, verify) read as l.CreateMerchant, the
// domains' as l.cards.CreateCard.
type services struct {
	*ledger.Ledger
	fx       *fx.Service
	cards    *cards.Service
	network  *network.Service
	remit    *remittance.Service
	delivery *delivery.Store
}

// domainSettings are the domains' settings (docs/operations.md); the zero
// value gives their defaults.
type domainSettings struct {
	fxRateMaxAge  time.Duration
	holdExpiry    time.Duration
	networkBounds network.Bounds
}

// newServices builds the domains on l.
func newServices(l *ledger.Ledger, d domainSettings) *services {
	rates := fx.New(l, d.fxRateMaxAge)
	c := cards.New(l, rates)
	return &services{
		Ledger:   l,
		fx:       rates,
		cards:    c,
		network:  network.New(l, c, rates, network.Config{HoldExpiry: d.holdExpiry, Bounds: d.networkBounds}),
		remit:    remittance.New(l),
		delivery: delivery.NewStore(l),
	}
}
