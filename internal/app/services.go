package app

import (
	"github.com/paygate/gateway/internal/app/services"
	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/ledger"
)

// Services are the gateway's domains built on one ledger
// (internal/app/services, which the tests' gatewaytest calls too).
type Services = services.Services

// NewServices builds the domains on l with the settings of cfg (nil: the
// defaults, for the operator's commands, which decide nothing they tune).
func NewServices(l *ledger.Ledger, cfg *config.Config) *Services {
	if cfg == nil {
		cfg = config.Default()
	}
	return services.New(l, services.Settings{
		FXRateMaxAge: cfg.FXRateMaxAge,
		Network:      network.Config{HoldExpiry: cfg.HoldExpiry, Bounds: cfg.NetworkBounds},
	})
}
