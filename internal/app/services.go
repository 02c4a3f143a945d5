package app

import (
	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/config"
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
	Bills      *bill.Service
}

// NewServices builds the domains on l with the settings of cfg (nil: the
// defaults, for the operator's commands, which decide nothing they tune).
func NewServices(l *ledger.Ledger, cfg *config.Config) *Services {
	if cfg == nil {
		cfg = config.Default()
	}
	rates := fx.New(l, cfg.FXRateMaxAge)
	c := cards.New(l, rates)
	return &Services{
		Ledger:     l,
		FX:         rates,
		Cards:      c,
		Network:    network.New(l, c, rates, network.Config{HoldExpiry: cfg.HoldExpiry, Bounds: cfg.NetworkBounds}),
		Remit:      remittance.New(l),
		Deliveries: delivery.NewStore(l),
		Bills:      bill.New(l),
	}
}
