// Package gatewaytest builds the gateway's domains on a test database, for
// the tests of every package above the ledger: one ledger and its services,
// closed when the test ends. Tests only.
package gatewaytest

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/app/services"
	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/domains"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgtest"
)

// Gateway is a ledger with the merchants and the domains on it, as the
// gateway builds them (internal/app/services). The ledger and the merchants
// are embedded, so that their operations read g.Deposit, g.CreateMerchant.
type Gateway = services.Services

// Merchants names the embedded merchant service of a Gateway.
type Merchants = services.Merchants

// Options tune New; the zero value gives the defaults.
type Options struct {
	// Ledger is the ledger's configuration.
	Ledger ledger.Config
	// Sealer seals the merchants' keys and the PANs; nil: a random data
	// key.
	Sealer *merchant.Sealer
	// FXRateMaxAge is the age beyond which a rate is refused.
	FXRateMaxAge time.Duration
	// Network configures the network side.
	Network network.Config
	// CellName and CellNumber make the domains mint as that cell's
	// (internal/cells); "" and 0: as without cells.
	CellName   string
	CellNumber int
}

// New builds the domains on db (nil: a fresh database of pgtest).
func New(t testing.TB, db *bun.DB, o Options) *Gateway {
	t.Helper()
	if db == nil {
		db = pgtest.NewDB(t)
	}
	if o.Sealer == nil {
		o.Sealer = NewSealer(t)
	}
	if o.Ledger.Domains == nil {
		o.Ledger.Domains = domains.All()
	}
	l := ledger.New(db, o.Ledger)
	t.Cleanup(l.Close)
	g := Build(l, o)
	t.Cleanup(g.Merchants.Close)
	return g
}

// Build builds the merchants and the domains on an open ledger with the
// gateway's own constructor, so that a test sees every domain serve has.
func Build(l *ledger.Ledger, o Options) *Gateway {
	return services.New(l, o.Sealer, services.Settings{FXRateMaxAge: o.FXRateMaxAge, Network: o.Network,
		CellName: o.CellName, CellNumber: o.CellNumber})
}

// NewSealer returns a sealer with a random data key.
func NewSealer(t testing.TB) *merchant.Sealer {
	t.Helper()
	key := make([]byte, merchant.DataKeyBytes)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	s, err := merchant.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Creator creates merchants: a Gateway or a merchant.Service.
type Creator interface {
	CreateMerchant(ctx context.Context, spec merchant.Spec) (*merchant.Merchant, *merchant.Credentials, error)
}

// Merchant creates a merchant with the currencies.
func Merchant(t testing.TB, c Creator, currencies ...string) *merchant.Merchant {
	t.Helper()
	m, _, err := c.CreateMerchant(context.Background(), merchant.Spec{Name: "Test shop", Currencies: currencies})
	if err != nil {
		t.Fatalf("CreateMerchant: %v", err)
	}
	return m
}

// Deposit credits a merchant's funding account.
func Deposit(t testing.TB, l *ledger.Ledger, m int64, cur string, minor int64) {
	t.Helper()
	if _, err := l.Deposit(context.Background(), m, cur, minor, nil); err != nil {
		t.Fatalf("Deposit: %v", err)
	}
}

// Verify fails the test when the ledger's Verify finds anything.
func Verify(t testing.TB, l *ledger.Ledger) *audit.Report {
	t.Helper()
	rep, err := audit.New(l).Verify(context.Background(), audit.VerifyOptions{})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	for _, p := range rep.Problems {
		t.Errorf("Verify: %s", p)
	}
	return rep
}
