package cards_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// loadsFixture is a merchant in USD and EUR whose daily card-load limit in
// USD is 100.00, with 1,000.00 in each funding account, on a clock the test
// moves.
type loadsFixture struct {
	l   *gatewaytest.Gateway
	m   *merchant.Merchant
	now *atomic.Pointer[time.Time]
}

const loadsDailyMax = 100_00

func newLoadsFixture(t *testing.T) *loadsFixture {
	t.Helper()
	ctx := context.Background()
	f := &loadsFixture{now: &atomic.Pointer[time.Time]{}}
	start := time.Now().UTC()
	f.now.Store(&start)
	f.l = newLedger(t, ledger.Config{Now: func() time.Time { return *f.now.Load() }})
	f.m = newMerchant(t, f.l, "USD", "EUR")
	if err := f.l.Cards.SetLimit(ctx, f.m.ID, "USD", 1_000_00, loadsDailyMax); err != nil {
		t.Fatal(err)
	}
	if _, err := f.l.FX.Set(ctx, "EUR", "USD", "1", 0); err != nil { // EUR → USD amount for amount
		t.Fatal(err)
	}
	deposit(t, f.l, f.m.ID, "USD", 1_000_00)
	deposit(t, f.l, f.m.ID, "EUR", 1_000_00)
	return f
}

func (f *loadsFixture) card(t *testing.T, amount int64) *cards.Card {
	t.Helper()
	c, err := f.l.Cards.CreateCard(context.Background(), f.m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: amount}, nil)
	if err != nil {
		t.Fatalf("CreateCard: %v", err)
	}
	return c
}

func (f *loadsFixture) transfer(cardNo string, amount int64, currency, direction string) error {
	_, err := f.l.Cards.Transfer(context.Background(), f.m.ID,
		cards.TransferInput{CardNo: cardNo, Amount: amount, Currency: currency, Direction: direction}, nil)
	return err
}

// loadedToday is the profile's count of today's card loads in USD.
func (f *loadsFixture) loadedToday(t *testing.T) int64 {
	t.Helper()
	p, err := f.l.Cards.Profile(context.Background(), f.m.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, lim := range p.Limits {
		if lim.Currency == "USD" {
			return lim.DailyCardIssued
		}
	}
	t.Fatal("no USD limit")
	return 0
}

// The daily card-load limit holds whatever path the money takes onto a
// card: each path loads the rest of the day's limit, then one more minor
// unit by the same path is refused (1007, daily_card_issue) and moves
// nothing. Before, only the amount of a card creation counted: an empty
// card topped up went around the limit.
func TestDailyCardLoadLimitCountsEveryPath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		// prepare runs first and may load part of the day's limit; load
		// loads amount (minor units of USD on the card) by the path.
		prepare func(t *testing.T, f *loadsFixture) *cards.Card
		load    func(f *loadsFixture, c *cards.Card, amount int64) error
	}{
		{
			name:    "create with an amount",
			prepare: func(t *testing.T, f *loadsFixture) *cards.Card { return nil },
			load: func(f *loadsFixture, _ *cards.Card, amount int64) error {
				_, err := f.l.Cards.CreateCard(ctx, f.m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: amount}, nil)
				return err
			},
		},
		{
			name:    "create empty, then transfer IN",
			prepare: func(t *testing.T, f *loadsFixture) *cards.Card { return f.card(t, 0) },
			load: func(f *loadsFixture, c *cards.Card, amount int64) error {
				return f.transfer(c.CardNo, amount, "USD", "IN")
			},
		},
		{
			name: "transfer IN to several empty cards",
			prepare: func(t *testing.T, f *loadsFixture) *cards.Card {
				for i := 0; i < 3; i++ {
					if err := f.transfer(f.card(t, 0).CardNo, 20_00, "USD", "IN"); err != nil {
						t.Fatal(err)
					}
				}
				return f.card(t, 0)
			},
			load: func(f *loadsFixture, c *cards.Card, amount int64) error {
				return f.transfer(c.CardNo, amount, "USD", "IN")
			},
		},
		{
			name:    "transfer IN from another currency's funding account",
			prepare: func(t *testing.T, f *loadsFixture) *cards.Card { return f.card(t, 0) },
			load: func(f *loadsFixture, c *cards.Card, amount int64) error {
				return f.transfer(c.CardNo, amount, "EUR", "IN") // counted in the card's USD
			},
		},
		{
			name: "transfer IN repaying what the card owes",
			prepare: func(t *testing.T, f *loadsFixture) *cards.Card {
				c := f.card(t, 10_00)
				a, err := f.l.Network.Authorize(ctx, network.AuthRequest{MessageID: "auth-1", CardNo: c.CardNo, Amount: 10_00, Currency: "USD"})
				if err != nil || !a.Approved {
					t.Fatalf("authorization %+v %v", a, err)
				}
				if _, err := f.l.Network.Clear(ctx, network.ClearRequest{MessageID: "clear-1", AuthID: a.AuthID, Amount: 12_00}); err != nil {
					t.Fatal(err)
				}
				return c
			},
			load: func(f *loadsFixture, c *cards.Card, amount int64) error {
				return f.transfer(c.CardNo, amount, "USD", "IN")
			},
		},
		{
			name:    "an appended entry from funding to a card",
			prepare: func(t *testing.T, f *loadsFixture) *cards.Card { return f.card(t, 0) },
			load: func(f *loadsFixture, c *cards.Card, amount int64) error {
				e := move(f.m.ID, postings.KindCardTransferIn, fund(f.m.ID, "USD"), cardAvail(f.m.ID, "USD", c.CardNo), amount)
				e.Refs.CardNo = c.CardNo
				_, err := f.l.Append(ctx, ledger.Batch{Merchant: f.m.ID, Entries: []postings.Entry{e}})
				return err
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newLoadsFixture(t)
			c := tt.prepare(t, f)
			rest := loadsDailyMax - f.loadedToday(t)
			if err := tt.load(f, c, rest); err != nil {
				t.Fatalf("loading the rest of the day's limit, %d: %v", rest, err)
			}
			if got := f.loadedToday(t); got != loadsDailyMax {
				t.Fatalf("loaded today %d, want %d", got, loadsDailyMax)
			}
			usd, eur := fundingBalance(t, f.l, f.m.ID, "USD"), fundingBalance(t, f.l, f.m.ID, "EUR")
			err := tt.load(f, c, 1)
			wantCode(t, err, postings.ELIMIT, "daily_card_issue")
			if u, e := fundingBalance(t, f.l, f.m.ID, "USD"), fundingBalance(t, f.l, f.m.ID, "EUR"); u != usd || e != eur || f.loadedToday(t) != loadsDailyMax {
				t.Fatalf("the refused load moved money: USD %d → %d, EUR %d → %d", usd, u, eur, e)
			}
			// The next UTC day starts afresh.
			next := f.now.Load().Add(24 * time.Hour)
			f.now.Store(&next)
			if _, err := f.l.FX.Set(ctx, "EUR", "USD", "1", 0); err != nil { // keep it fresh
				t.Fatal(err)
			}
			if err := tt.load(f, c, 1); err != nil {
				t.Fatalf("the next day: %v", err)
			}
			mustVerify(t, f.l)
		})
	}
}

// What is not a load is not counted, and does not give any of the day's
// limit back: a transfer OUT, a cancellation, the card network's refunds
// and released holds move money once the limit is reached, and a top-up
// after a withdrawal is still refused.
func TestDailyCardLoadLimitIgnoresOtherMoves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newLoadsFixture(t)
	c := f.card(t, loadsDailyMax)
	a, err := f.l.Network.Authorize(ctx, network.AuthRequest{MessageID: "auth-1", CardNo: c.CardNo, Amount: 30_00, Currency: "USD"})
	if err != nil || !a.Approved {
		t.Fatalf("authorization %+v %v", a, err)
	}
	if _, err := f.l.Network.Clear(ctx, network.ClearRequest{MessageID: "clear-1", AuthID: a.AuthID, Amount: 20_00}); err != nil {
		t.Fatal(err) // releases 10.00 to the card
	}
	if _, err := f.l.Network.Refund(ctx, network.RefundRequest{MessageID: "refund-1", CardNo: c.CardNo, Amount: 20_00, Currency: "USD"}); err != nil {
		t.Fatal(err)
	}
	b, err := f.l.Network.Authorize(ctx, network.AuthRequest{MessageID: "auth-2", CardNo: c.CardNo, Amount: 5_00, Currency: "USD"})
	if err != nil || !b.Approved {
		t.Fatalf("authorization %+v %v", b, err)
	}
	if _, err := f.l.Network.Reverse(ctx, network.ReverseRequest{MessageID: "reverse-2", AuthID: b.AuthID}); err != nil {
		t.Fatal(err)
	}
	if err := f.transfer(c.CardNo, 50_00, "USD", "OUT"); err != nil {
		t.Fatal(err)
	}
	if got := f.loadedToday(t); got != loadsDailyMax {
		t.Fatalf("loaded today %d, want only the creation's %d", got, loadsDailyMax)
	}
	wantCode(t, f.transfer(c.CardNo, 1, "USD", "IN"), postings.ELIMIT, "daily_card_issue")
	if _, err := f.l.Cards.CancelCard(ctx, f.m.ID, c.CardNo, nil); err != nil {
		t.Fatal(err)
	}
	if got := f.loadedToday(t); got != loadsDailyMax {
		t.Fatalf("loaded today %d after the cancellation", got)
	}
	mustVerify(t, f.l)
}
