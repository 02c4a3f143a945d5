package merchant_test

import (
	"testing"

	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// newMerchants returns the merchants of a ledger on a fresh database, with
// the domains (a new merchant gets their rows, as in the gateway).
func newMerchants(t testing.TB, cfg ledger.Config) *merchant.Service {
	t.Helper()
	return gatewaytest.New(t, nil, gatewaytest.Options{Ledger: cfg}).Merchants
}
