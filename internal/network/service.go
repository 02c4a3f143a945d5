package network

import (
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/fx"
	"github.com/paygate/gateway/ledger"
)

// Config tunes the network side. The zero value gives the defaults.
type Config struct {
	// HoldExpiry is how long an authorization hold lasts without clearing
	// before the expiry worker releases it. Default 7 days.
	HoldExpiry time.Duration
	// Bounds bounds the card network's messages (docs/network.md,
	// "Bounds").
	Bounds Bounds
	// Cell is the name of the cell this database is (internal/cells):
	// authorization ids carry it (auth_<cell>…); "" without cells.
	Cell string
}

// HoldExpiryDefault is Config.HoldExpiry's default.
const HoldExpiryDefault = 7 * 24 * time.Hour

// Service is the network side on a ledger, over the card domain.
type Service struct {
	l     *ledger.Ledger
	cards *cards.Service
	fx    *fx.Service
	cfg   Config
}

// New returns the network side of l.
func New(l *ledger.Ledger, c *cards.Service, rates *fx.Service, cfg Config) *Service {
	if cfg.HoldExpiry <= 0 {
		cfg.HoldExpiry = HoldExpiryDefault
	}
	cfg.Bounds = cfg.Bounds.withDefaults()
	return &Service{l: l, cards: c, fx: rates, cfg: cfg}
}

// Bounds returns the bounds in force, defaults filled in.
func (s *Service) Bounds() Bounds { return s.cfg.Bounds.withDefaults() }
