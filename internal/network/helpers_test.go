package network_test

import (
	"context"
	"testing"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgtest"
	"github.com/paygate/gateway/postings"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// newLedger returns the gateway's domains on a fresh database.
func newLedger(t testing.TB, cfg ledger.Config) *gatewaytest.Gateway {
	t.Helper()
	return gatewaytest.New(t, nil, gatewaytest.Options{Ledger: cfg})
}

func newMerchant(t testing.TB, l *gatewaytest.Gateway, currencies ...string) *merchant.Merchant {
	t.Helper()
	return gatewaytest.Merchant(t, l, currencies...)
}

func deposit(t testing.TB, l *gatewaytest.Gateway, m int64, cur string, minor int64) {
	t.Helper()
	gatewaytest.Deposit(t, l.Ledger, m, cur, minor)
}

// mustVerify fails the test when Verify finds anything.
func mustVerify(t testing.TB, l *gatewaytest.Gateway) *audit.Report {
	t.Helper()
	return gatewaytest.Verify(t, l.Ledger)
}

func fund(m int64, cur string) postings.Account {
	return postings.MerchantAccount(m, postings.AccountFunding, cur)
}

func wantCode(t *testing.T, err error, code postings.Code, reason postings.Reason) {
	t.Helper()
	pe := postings.AsError(err)
	if err == nil || pe.Code != code || (reason != "" && pe.Reason != reason) {
		t.Fatalf("got error %v, want %s/%s", err, code, reason)
	}
}

func fundingBalance(t *testing.T, l *gatewaytest.Gateway, m int64, cur string) int64 {
	t.Helper()
	b, err := l.Balance(context.Background(), fund(m, cur))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
