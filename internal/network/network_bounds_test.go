package network_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// newBoundsFixture is newNetworkFixture with network bounds: a merchant in
// USD and EUR with a large card balance limit, 1,000,000.00 USD deposited,
// and one USD card holding cardMinor.
func newBoundsFixture(t *testing.T, cardMinor int64, bounds network.Bounds) *networkFixture {
	t.Helper()
	ctx := context.Background()
	f := &networkFixture{now: &atomic.Pointer[time.Time]{}}
	start := time.Now().UTC()
	f.now.Store(&start)
	f.l = gatewaytest.New(t, nil, gatewaytest.Options{Ledger: ledger.Config{Now: func() time.Time { return *f.now.Load() }},
		Network: network.Config{Bounds: bounds}})
	f.m = newMerchant(t, f.l, "USD", "EUR")
	if err := f.l.Cards.SetLimit(ctx, f.m.ID, "USD", 2_000_000_00, 10_000_000_00); err != nil {
		t.Fatal(err)
	}
	deposit(t, f.l, f.m.ID, "USD", 1_000_000_00)
	var err error
	f.card, err = f.l.Cards.CreateCard(ctx, f.m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: cardMinor}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *networkFixture) auth(t *testing.T, cardNo string, amount int64, currency string) *network.AuthResult {
	t.Helper()
	res, err := f.l.Network.Authorize(context.Background(), network.AuthRequest{MessageID: f.msg(), CardNo: cardNo, Amount: amount, Currency: currency})
	if err != nil {
		t.Fatalf("Authorize: %v", err)
	}
	return res
}

func (f *networkFixture) clear(authID string, amount int64) (*network.HoldResult, error) {
	return f.l.Network.Clear(context.Background(), network.ClearRequest{MessageID: f.msg(), AuthID: authID, Amount: amount})
}

func (f *networkFixture) refund(cardNo string, amount int64) (*network.RefundResult, error) {
	return f.l.Network.Refund(context.Background(), network.RefundRequest{MessageID: f.msg(), CardNo: cardNo, Amount: amount, Currency: "USD"})
}

// wantReason fails unless err is an *postings.Error of code and reason.
func wantReason(t *testing.T, what string, err error, code postings.Code, reason postings.Reason) {
	t.Helper()
	if pe := postings.AsError(err); err == nil || pe.Code != code || pe.Reason != reason {
		t.Fatalf("%s: got %v, want %s/%s", what, err, code, reason)
	}
}

// The largest network message per currency, in minor units with the
// currency's exponent: configured (USD, JPY with no decimals, KWD with
// three), or the USD figure converted at the operator's rate (EUR), or in
// whole units without a rate (CHF). One minor unit above is declined 13
// for an authorization; at the bound the decision is the card's (here 51:
// the card holds 10.00 USD).
func TestNetworkMessageMaxPerCurrency(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newBoundsFixture(t, 10_00, network.Bounds{MessageMax: map[string]int64{
		"USD": 50_000_00, "JPY": 7_500_000, "KWD": 15_000_000}})
	// USD/EUR sets the EUR bound; USD/JPY and USD/KWD are there to show
	// that a configured bound wins over a rate. CHF, BHD and CLP have no
	// USD rate.
	for _, pair := range []struct{ base, quote, rate string }{
		{"USD", "EUR", "0.9"}, {"USD", "JPY", "150"}, {"USD", "KWD", "0.3"}, {"CHF", "USD", "1.1"},
	} {
		if _, err := f.l.FX.Set(ctx, pair.base, pair.quote, pair.rate, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		currency string
		max      int64
	}{
		{"USD", 50_000_00},  // configured
		{"JPY", 7_500_000},  // configured, no decimals
		{"KWD", 15_000_000}, // configured, three decimals: 15,000.000 KWD
		{"EUR", 45_000_00},  // 50,000.00 USD × 0.9
		{"CHF", 50_000_00},  // no USD/CHF rate: the same whole units
		{"BHD", 50_000_000}, // no rate, three decimals: 50,000.000 BHD
		{"CLP", 50_000},     // no rate, no decimals
	} {
		if r := f.auth(t, f.card.CardNo, tt.max+1, tt.currency); r.Approved || r.Code != network.RespInvalidAmount {
			t.Errorf("%s: %d above the largest message: %+v, want decline 13", tt.currency, tt.max+1, r)
		}
		if r := f.auth(t, f.card.CardNo, tt.max, tt.currency); r.Code == network.RespInvalidAmount {
			t.Errorf("%s: %d at the largest message: declined 13", tt.currency, tt.max)
		}
	}
	// The other messages: a clearing, a reversal and a refund above the
	// bound are refused (1007) and change nothing.
	g := newBoundsFixture(t, 500_00, network.Bounds{MessageMax: map[string]int64{"USD": 100_00}})
	a := g.auth(t, g.card.CardNo, 100_00, "USD")
	if !a.Approved {
		t.Fatalf("authorization at the bound: %+v", a)
	}
	_, err := g.clear(a.AuthID, 100_01) // within the over-capture tolerance, above the message bound
	wantReason(t, "clearing", err, postings.ELIMIT, "network_message_max")
	_, err = g.l.Network.Reverse(ctx, network.ReverseRequest{MessageID: g.msg(), AuthID: a.AuthID, Amount: 100_01})
	wantReason(t, "reversal", err, postings.ELIMIT, "network_message_max")
	_, err = g.refund(g.card.CardNo, 100_01)
	wantReason(t, "refund", err, postings.ELIMIT, "network_message_max")
	if avail, held := g.balances(t); avail != 400_00 || held != 100_00 {
		t.Fatalf("refused messages moved money: available %d held %d", avail, held)
	}
	if res, err := g.clear(a.AuthID, 100_00); err != nil || res.Captured != 100_00 {
		t.Fatalf("clearing at the bound: %+v %v", res, err)
	}
	mustVerify(t, g.l)
}

// The default bound is 1,000,000.00 USD: the largest amount the API reads
// (10^15 minor units), with which one card of the issue reached 9.2×10^16
// USD message after message, is refused whatever the message.
func TestNetworkMessageMaxDefault(t *testing.T) {
	t.Parallel()
	f := newBoundsFixture(t, 10_00, network.Bounds{})
	if got := f.l.Network.Bounds().MessageMax["USD"]; got != 1_000_000_00 {
		t.Fatalf("default USD bound %d", got)
	}
	huge := postings.AmountMinorMax
	if r := f.auth(t, f.card.CardNo, huge, "USD"); r.Code != network.RespInvalidAmount {
		t.Fatalf("huge authorization: %+v", r)
	}
	_, err := f.refund(f.card.CardNo, huge)
	wantReason(t, "huge refund", err, postings.ELIMIT, "network_message_max")
	a := f.auth(t, f.card.CardNo, 10_00, "USD")
	_, err = f.clear(a.AuthID, 1_000_000_01)
	wantReason(t, "huge clearing", err, postings.ELIMIT, "network_message_max")
}

// A clearing may exceed its authorization by the over-capture tolerance
// (default 20 %), on the amount authorized in the transaction's currency,
// and not by one minor unit more. A refused clearing leaves the hold open,
// its repeat gets the same answer, and a clearing within the tolerance
// still captures it.
func TestOverCaptureTolerance(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		bps       int64
		auth      int64
		currency  string
		ok, above int64 // the largest clearing allowed, and one minor unit more
	}{
		{"default 20 %", 0, 100_00, "USD", 120_00, 120_01},
		{"15 %", 1500, 100_00, "USD", 115_00, 115_01},
		{"12.5 % of an odd amount", 1250, 33_33, "USD", 37_49, 37_50}, // 37.49625: the bound is not rounded up
		{"none", network.NoOverCapture, 100_00, "USD", 100_00, 100_01},
		{"one minor unit", 0, 1, "USD", 1, 2},        // 1.2 minor units allow 1
		{"five minor units", 0, 5, "USD", 6, 7},      // 6.0 exactly
		{"in EUR", 0, 100_00, "EUR", 120_00, 120_01}, // the transaction's currency, whatever the rate
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newBoundsFixture(t, 1_000_00, network.Bounds{OverCaptureBps: tt.bps})
			if _, err := f.l.FX.Set(ctx, "EUR", "USD", "1.0837", 0); err != nil {
				t.Fatal(err)
			}
			a := f.auth(t, f.card.CardNo, tt.auth, tt.currency)
			if !a.Approved {
				t.Fatalf("authorization %+v", a)
			}
			refused := network.ClearRequest{MessageID: f.msg(), AuthID: a.AuthID, Amount: tt.above}
			for i := 0; i < 2; i++ { // the repeat replays the refusal
				_, err := f.l.Network.Clear(ctx, refused)
				wantReason(t, "clearing above the tolerance", err, postings.ELIMIT, "over_capture")
			}
			if got, err := f.l.Network.Authorization(ctx, a.AuthID); err != nil || got.Status != network.AuthOpen || got.Held != a.CardAmount+a.Fee {
				t.Fatalf("after the refusal: %+v %v", got, err)
			}
			if res, err := f.clear(a.AuthID, tt.ok); err != nil || res.Status != network.AuthCleared {
				t.Fatalf("clearing at the tolerance: %+v %v", res, err)
			}
			mustVerify(t, f.l)
		})
	}
}

// Refunds are matched per card against what the network captured on it:
// nothing is refunded to a card that was never captured, and never more
// than was captured (amount and fee), also on a cancelled card. The
// operator may allow unmatched refunds up to a limit per card and
// currency.
func TestRefundsBoundedByCaptures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("matched", func(t *testing.T) {
		t.Parallel()
		f := newBoundsFixture(t, 100_00, network.Bounds{})
		_, err := f.refund(f.card.CardNo, 1)
		wantReason(t, "refund without a capture", err, postings.ELIMIT, "refund_unmatched")
		a := f.auth(t, f.card.CardNo, 50_00, "USD")
		if _, err := f.clear(a.AuthID, 30_00); err != nil {
			t.Fatal(err)
		}
		b := f.auth(t, f.card.CardNo, 10_00, "USD") // open: not captured, not refundable
		for _, amount := range []int64{10_00, 19_99, 1} {
			if _, err := f.refund(f.card.CardNo, amount); err != nil {
				t.Fatalf("refund %d of 30.00 captured: %v", amount, err)
			}
		}
		_, err = f.refund(f.card.CardNo, 1)
		wantReason(t, "refund beyond the captures", err, postings.ELIMIT, "refund_unmatched")
		if _, err := f.clear(b.AuthID, 5_00); err != nil {
			t.Fatal(err)
		}
		if _, err := f.l.Cards.CancelCard(ctx, f.m.ID, f.card.CardNo, nil); err != nil {
			t.Fatal(err)
		}
		if r, err := f.refund(f.card.CardNo, 5_00); err != nil || r.Credited != "funding" {
			t.Fatalf("refund of the last capture to the cancelled card: %+v %v", r, err)
		}
		_, err = f.refund(f.card.CardNo, 1)
		wantReason(t, "refund beyond the captures of a cancelled card", err, postings.ELIMIT, "refund_unmatched")
		mustVerify(t, f.l)
	})
	t.Run("cross-border fee", func(t *testing.T) {
		t.Parallel()
		f := newBoundsFixture(t, 100_00, network.Bounds{})
		if _, err := f.l.FX.Set(ctx, "EUR", "USD", "1.1", 0); err != nil {
			t.Fatal(err)
		}
		a := f.auth(t, f.card.CardNo, 10_00, "EUR") // 11.00 USD and a 0.17 fee
		if res, err := f.clear(a.AuthID, 10_00); err != nil || res.Captured+res.Fee != 11_17 {
			t.Fatalf("clearing %+v %v", res, err)
		}
		if _, err := f.refund(f.card.CardNo, 11_17); err != nil {
			t.Fatalf("refund of amount and fee: %v", err)
		}
		_, err := f.refund(f.card.CardNo, 1)
		wantReason(t, "refund beyond", err, postings.ELIMIT, "refund_unmatched")
	})
	t.Run("unmatched allowance", func(t *testing.T) {
		t.Parallel()
		f := newBoundsFixture(t, 100_00, network.Bounds{UnmatchedRefundMax: map[string]int64{"USD": 10_00, "EUR": 1}})
		if _, err := f.refund(f.card.CardNo, 10_00); err != nil {
			t.Fatalf("unmatched refund within the allowance: %v", err)
		}
		_, err := f.refund(f.card.CardNo, 1)
		wantReason(t, "beyond the allowance", err, postings.ELIMIT, "refund_unmatched")
		a := f.auth(t, f.card.CardNo, 20_00, "USD")
		if _, err := f.clear(a.AuthID, 20_00); err != nil {
			t.Fatal(err)
		}
		if _, err := f.refund(f.card.CardNo, 20_00); err != nil {
			t.Fatalf("refund of the capture: %v", err)
		}
		_, err = f.refund(f.card.CardNo, 1)
		wantReason(t, "beyond captures and allowance", err, postings.ELIMIT, "refund_unmatched")
		// The allowance is per card.
		other, err := f.l.Cards.CreateCard(ctx, f.m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.refund(other.CardNo, 10_00); err != nil {
			t.Fatalf("another card's allowance: %v", err)
		}
		mustVerify(t, f.l)
	})
}

// Refunds racing each other and the clearings they are matched against:
// whatever the batches the writer makes of them, no card is ever refunded
// more than the network captured on it.
func TestRefundsBoundedUnderConcurrency(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newBoundsFixture(t, 1_000_00, network.Bounds{})
	var auths []string
	for i := 0; i < 10; i++ {
		a := f.auth(t, f.card.CardNo, 10_00, "USD")
		auths = append(auths, a.AuthID)
	}
	var refunded, captured atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := 0; i < 60; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if i < len(auths) {
				if _, err := f.l.Network.Clear(ctx, network.ClearRequest{MessageID: fmt.Sprintf("clr-%d", i), AuthID: auths[i], Amount: 10_00}); err != nil {
					errs <- err
					return
				}
				captured.Add(10_00)
				return
			}
			_, err := f.l.Network.Refund(ctx, network.RefundRequest{MessageID: fmt.Sprintf("ref-%d", i), CardNo: f.card.CardNo, Amount: 4_00, Currency: "USD"})
			if pe := postings.AsError(err); err != nil && pe.Reason != "refund_unmatched" {
				errs <- err
				return
			}
			if err == nil {
				refunded.Add(4_00)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if refunded.Load() > captured.Load() || captured.Load() != 100_00 {
		t.Fatalf("refunded %d of %d captured", refunded.Load(), captured.Load())
	}
	// Whatever raced, what is left is refundable to the cent.
	left := captured.Load() - refunded.Load()
	if left > 0 {
		if _, err := f.refund(f.card.CardNo, left); err != nil {
			t.Fatalf("refund of the %d left: %v", left, err)
		}
	}
	_, err := f.refund(f.card.CardNo, 1)
	wantReason(t, "after everything was refunded", err, postings.ELIMIT, "refund_unmatched")
	mustVerify(t, f.l)
}
