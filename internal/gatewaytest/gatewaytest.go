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

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/domains"
	"github.com/paygate/gateway/internal/fx"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgtest"
)

// Gateway is a ledger with the domains on it. The ledger is embedded, so
// that its own operations read g.CreateMerchant, g.Deposit.
type Gateway struct {
	*ledger.Ledger
	FX         *fx.Service
	Cards      *cards.Service
	Network    *network.Service
	Remit      *remittance.Service
	Deliveries *delivery.Store
	Bills      *bill.Service
}

// Options tune New; the zero value gives the defaults.
type Options struct {
	// Ledger is the ledger's configuration; a missing Sealer gets a random
	// data key.
	Ledger ledger.Config
	// FXRateMaxAge is the age beyond which a rate is refused.
	FXRateMaxAge time.Duration
	// Network configures the network side.
	Network network.Config
}

// New builds the domains on db (nil: a fresh database of pgtest).
func New(t testing.TB, db *bun.DB, o Options) *Gateway {
	t.Helper()
	if db == nil {
		db = pgtest.NewDB(t)
	}
	if o.Ledger.Sealer == nil {
		o.Ledger.Sealer = NewSealer(t)
	}
	if o.Ledger.Domains == nil {
		o.Ledger.Domains = domains.All()
	}
	l := ledger.New(db, o.Ledger)
	t.Cleanup(l.Close)
	return Build(l, o)
}

// Build builds the domains on an open ledger.
func Build(l *ledger.Ledger, o Options) *Gateway {
	rates := fx.New(l, o.FXRateMaxAge)
	c := cards.New(l, rates)
	return &Gateway{
		Ledger:     l,
		FX:         rates,
		Cards:      c,
		Network:    network.New(l, c, rates, o.Network),
		Remit:      remittance.New(l),
		Deliveries: delivery.NewStore(l),
		Bills:      bill.New(l),
	}
}

// NewSealer returns a sealer with a random data key.
func NewSealer(t testing.TB) *ledger.Sealer {
	t.Helper()
	key := make([]byte, ledger.DataKeyBytes)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	s, err := ledger.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Merchant creates a merchant with the currencies.
func Merchant(t testing.TB, l *ledger.Ledger, currencies ...string) *ledger.Merchant {
	t.Helper()
	m, _, err := l.CreateMerchant(context.Background(), ledger.MerchantSpec{Name: "Test shop", Currencies: currencies})
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
