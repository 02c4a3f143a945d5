// Package services builds the gateway's domains on one ledger: the one
// constructor that serve, the operator's commands (through internal/app)
// and the tests above the core (through internal/gatewaytest) call, so that
// a domain added here is in all three. It is a package of its own, below
// internal/app, because api's tests build the domains and app imports api:
// the constructor must not.
package services

import (
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/fx"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
)

// Services are the gateway's domains built on one ledger: the wiring of
// docs/architecture.md. The ledger is embedded: its own operations
// (merchants, deposits, bills, verify) read as s.CreateMerchant, the
// domains' as s.Cards.CreateCard.
type Services struct {
	*ledger.Ledger
	FX         *fx.Service
	Cards      *cards.Service
	Network    *network.Service
	Remit      *remittance.Service
	Deliveries *delivery.Store
}

// Settings are what the domains take, as plain values (the configuration's
// GATEWAY_FX_RATE_MAX_AGE, GATEWAY_HOLD_EXPIRY and GATEWAY_NETWORK_*). The
// zero value gives each domain's defaults.
type Settings struct {
	// FXRateMaxAge is the age beyond which a rate is refused.
	FXRateMaxAge time.Duration
	// Network configures the network side.
	Network network.Config
}

// New builds the domains on l.
func New(l *ledger.Ledger, s Settings) *Services {
	rates := fx.New(l, s.FXRateMaxAge)
	c := cards.New(l, rates)
	return &Services{
		Ledger:     l,
		FX:         rates,
		Cards:      c,
		Network:    network.New(l, c, rates, s.Network),
		Remit:      remittance.New(l),
		Deliveries: delivery.NewStore(l),
	}
}
