package bill_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

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

// billDay0 is the first of the five days of fiveDaysOfLines.
var billDay0 = time.Date(2031, 3, 10, 0, 0, 0, 0, time.UTC)

// billFixture is a ledger whose clock the test sets, a merchant m with
// five days of bill lines, and another merchant.
type billFixture struct {
	l        books
	m, other *merchant.Merchant
	set      func(time.Time) // the ledger's clock
}

// fiveDaysOfLines is the bill the page and filter tests read: 60 batches
// of 64 entries, 2 hours (and a second more each) apart from billDay0 —
// deposits (one line each) and card fundings (two lines: funding out, card
// in) on eight cards, in USD and EUR — with another merchant's deposit
// every ten batches in between. cardEntry, when given, may replace entry i
// of batch b where a card funding would go (ok false keeps the funding).
func fiveDaysOfLines(t *testing.T, cardEntry func(b, i int, m int64, cur string) (e postings.Entry, ok bool)) billFixture {
	t.Helper()
	var clock atomic.Pointer[time.Time]
	set := func(tm time.Time) { clock.Store(&tm) }
	set(billDay0)
	l := newLedger(t, ledger.Config{Now: func() time.Time { return *clock.Load() }})
	f := billFixture{l: l, m: newMerchant(t, l, "USD", "EUR"), other: newMerchant(t, l, "USD"), set: set}
	m := f.m.ID
	const batches = 60
	for b := 0; b < batches; b++ {
		set(billDay0.Add(time.Duration(b) * 2 * time.Hour).Add(time.Duration(b) * time.Second))
		entries := make([]postings.Entry, 0, ledger.BatchEntriesMax)
		for i := 0; i < ledger.BatchEntriesMax; i++ {
			cur := []string{"USD", "EUR"}[i%2]
			if i%4 < 2 {
				entries = append(entries, move(m, postings.KindDeposit,
					postings.MerchantAccount(m, postings.AccountWorld, cur), fund(m, cur), int64(100+i)))
				continue
			}
			if cardEntry != nil {
				if e, ok := cardEntry(b, i, m, cur); ok {
					entries = append(entries, e)
					continue
				}
			}
			card := fmt.Sprintf("crd_bill%02d", i%8)
			entries = append(entries, move(m, postings.KindCardFund, fund(m, cur), cardAvail(m, cur, card), int64(1+i%3)))
		}
		if _, err := l.Append(context.Background(), ledger.Batch{Merchant: m, Entries: entries}); err != nil {
			t.Fatalf("Append batch %d: %v", b, err)
		}
		if b%10 == 0 {
			gatewaytest.Deposit(t, l.Ledger, f.other.ID, "USD", 1_00) // another merchant's lines in between
		}
	}
	return f
}
