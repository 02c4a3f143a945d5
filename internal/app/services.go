package app

import (
	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/config"
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

// NewServices builds the merchants, whose keys sealer seals (nil: none can
// be created or rolled, as for an auditor's reads), and the domains on l
// with the settings of cfg (nil: the defaults, for the operator's commands,
// which decide nothing they tune).
func NewServices(l *ledger.Ledger, sealer *merchant.Sealer, cfg *config.Config) *Services {
	if cfg == nil {
		cfg = config.Default()
	}
	ms := merchant.New(l, sealer)
	rates := fx.New(l, cfg.FXRateMaxAge)
	c := cards.New(l, rates, ms)
	return &Services{
		Ledger:     l,
		Merchants:  ms,
		FX:         rates,
		Cards:      c,
		Network:    network.New(l, c, rates, network.Config{HoldExpiry: cfg.HoldExpiry, Bounds: cfg.NetworkBounds}),
		Remit:      remittance.New(l),
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
