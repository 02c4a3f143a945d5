package audit_test

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

// newMerchant creates a merchant on l (its keys sealed with a key of its
// own: audit reads no key).
func newMerchant(t testing.TB, l *ledger.Ledger, currencies ...string) *merchant.Merchant {
	t.Helper()
	return gatewaytest.Merchant(t, merchant.New(l, gatewaytest.NewSealer(t)), currencies...)
}

func deposit(t testing.TB, l *ledger.Ledger, m int64, cur string, minor int64) {
	t.Helper()
	gatewaytest.Deposit(t, l, m, cur, minor)
}

// mustVerify fails the test when Verify finds anything.
func mustVerify(t testing.TB, l *ledger.Ledger) *audit.Report {
	t.Helper()
	return gatewaytest.Verify(t, l)
}

func fund(m int64, cur string) postings.Account {
	return postings.MerchantAccount(m, postings.AccountFunding, cur)
}

func move(m int64, kind postings.Kind, from, to postings.Account, amount int64) postings.Entry {
	return postings.Entry{Merchant: m, Kind: kind, Postings: []postings.Posting{
		{Source: from, Destination: to, Amount: amount, Currency: from.Currency},
	}}
}
