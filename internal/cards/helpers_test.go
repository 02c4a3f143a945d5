package cards_test

import (
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

func cardAvail(m int64, cur, card string) postings.Account {
	return postings.CardAccount(m, postings.AccountCardAvailable, cur, card)
}

func move(m int64, kind postings.Kind, from, to postings.Account, amount int64) postings.Entry {
	return postings.Entry{Merchant: m, Kind: kind, Postings: []postings.Posting{
		{Source: from, Destination: to, Amount: amount, Currency: from.Currency},
	}}
}
