package bill_test

import (
	"testing"

	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgtest"
	"github.com/paygate/gateway/postings"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// books is a ledger on a fresh database and the bill read from it: the
// tests append entries through the one and read them through the other.
type books struct {
	*ledger.Ledger
	*bill.Service
	g *gatewaytest.Gateway
}

func newLedger(t testing.TB, cfg ledger.Config) books {
	t.Helper()
	g := gatewaytest.New(t, nil, gatewaytest.Options{Ledger: cfg})
	return books{Ledger: g.Ledger, Service: g.Bills, g: g}
}

func newMerchant(t testing.TB, l books, currencies ...string) *merchant.Merchant {
	t.Helper()
	return gatewaytest.Merchant(t, l.g, currencies...)
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
