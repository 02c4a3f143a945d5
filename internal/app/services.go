package app

import (
	"github.com/paygate/gateway/internal/app/services"
	"github.com/paygate/gateway/internal/cells"
	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/ledger"
)

// Services are the gateway's merchants and domains built on one ledger
// (internal/app/services, which the tests' gatewaytest calls too).
type Services = services.Services

// Merchants names the embedded merchant service of Services.
type Merchants = merchant.Service

// NewServices builds the merchants, whose keys sealer seals (nil: none can
// be created or rolled, as for an auditor's reads), and the domains on l
// with the settings of cfg (nil: the defaults, for the operator's commands,
// which decide nothing they tune).
func NewServices(l *ledger.Ledger, sealer *merchant.Sealer, cfg *config.Config) *Services {
	return NewCellServices(l, sealer, cfg, cells.Identity{})
}

// NewCellServices is NewServices for a database that is cell id: what it
// mints carries the cell (docs/scaling.md, "Ids"). The zero id is no cell.
func NewCellServices(l *ledger.Ledger, sealer *merchant.Sealer, cfg *config.Config, id cells.Identity) *Services {
	if cfg == nil {
		cfg = config.Default()
	}
	return services.New(l, sealer, services.Settings{
		FXRateMaxAge: cfg.FXRateMaxAge,
		Network:      network.Config{HoldExpiry: cfg.HoldExpiry, Bounds: cfg.NetworkBounds},
		CellName:     id.Name, CellNumber: id.Number,
	})
}
