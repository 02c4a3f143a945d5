package network_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/testseed"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Holds across currencies (docs/network.md, "Rounding and the odd minor
// unit"): an authorization in another currency than the card's is
// converted once; every reversal and clearing takes a share of that hold,
// and the messages that close it add up to exactly what it held.

// fxCards is a merchant with a card in each of USD (exponent 2), JPY (0)
// and KWD (3), each holding plenty, and a rate for every ordered pair of
// USD, EUR, JPY, KWD and BHD.
type fxCards struct {
	l     *gatewaytest.Gateway
	m     *merchant.Merchant
	cards map[string]*cards.Card
	seq   int
}

var fxCardCurrencies = []string{"USD", "JPY", "KWD"}
var fxTxnCurrencies = []string{"USD", "EUR", "JPY", "KWD", "BHD"}

func newFXCards(t *testing.T) *fxCards {
	t.Helper()
	ctx := context.Background()
	f := &fxCards{l: newLedger(t, ledger.Config{}), cards: map[string]*cards.Card{}}
	f.m = newMerchant(t, f.l, fxCardCurrencies...)
	for i, cur := range fxCardCurrencies {
		exp := postings.MustCurrency(cur).Exponent
		big := int64(100_000_000_000) // whole units
		for e := int32(0); e < exp; e++ {
			big *= 10
		}
		if i > 0 {
			if err := f.l.Cards.UpsertBIN(ctx, cards.BIN{Bin: fmt.Sprintf("45320%d", 7+i), Currency: cur, Network: "VISA", Enabled: true}); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.l.Cards.SetLimit(ctx, f.m.ID, cur, big, 10*big); err != nil {
			t.Fatal(err)
		}
		deposit(t, f.l, f.m.ID, cur, big)
		bin := "453201"
		if i > 0 {
			bin = fmt.Sprintf("45320%d", 7+i)
		}
		c, err := f.l.Cards.CreateCard(ctx, f.m.ID, cards.CreateCardInput{Bin: bin, Currency: cur, Amount: big}, nil)
		if err != nil {
			t.Fatalf("CreateCard %s: %v", cur, err)
		}
		f.cards[cur] = c
	}
	return f
}

func (f *fxCards) msg() string {
	f.seq++
	return fmt.Sprintf("fx-%d", f.seq)
}

func (f *fxCards) balances(t *testing.T, cur string) (avail, held int64) {
	t.Helper()
	c, err := f.l.Cards.Card(context.Background(), f.m.ID, f.cards[cur].CardNo)
	if err != nil {
		t.Fatal(err)
	}
	return c.Available, c.Held
}

func (f *fxCards) authorize(t *testing.T, card, txnCur string, amount int64) *network.AuthResult {
	t.Helper()
	a, err := f.l.Network.Authorize(context.Background(), network.AuthRequest{MessageID: f.msg(), CardNo: f.cards[card].CardNo,
		Amount: amount, Currency: txnCur})
	if err != nil {
		t.Fatalf("Authorize %d %s on the %s card: %v", amount, txnCur, card, err)
	}
	return a
}

func (f *fxCards) reverse(t *testing.T, authID string, amount int64) *network.HoldResult {
	t.Helper()
	r, err := f.l.Network.Reverse(context.Background(), network.ReverseRequest{MessageID: f.msg(), AuthID: authID, Amount: amount})
	if err != nil {
		t.Fatalf("Reverse %d of %s: %v", amount, authID, err)
	}
	return r
}

func (f *fxCards) clear(t *testing.T, authID string, amount int64) *network.HoldResult {
	t.Helper()
	r, err := f.l.Network.Clear(context.Background(), network.ClearRequest{MessageID: f.msg(), AuthID: authID, Amount: amount})
	if err != nil {
		t.Fatalf("Clear %d of %s: %v", amount, authID, err)
	}
	return r
}

// setRandomRate gives the pair a random rate of 1 to 8 significant digits
// that keeps one minor unit of the transaction convertible without
// reaching absurd card amounts.
func (f *fxCards) setRandomRate(t *testing.T, rng *rand.Rand, txn, card string) string {
	t.Helper()
	if txn == card {
		return ""
	}
	// The rate's order of magnitude follows the currencies' exponents and
	// a realistic spread of values (0.001 to 1000 units per unit).
	mant := 10_000_000 + rng.Int64N(90_000_000)
	exp := rng.IntN(7) - 3 - 7
	rate := fmt.Sprintf("%de%d", mant, exp)
	if _, err := f.l.FX.Set(context.Background(), txn, card, rate, 0); err != nil {
		t.Fatalf("SetFXRate %s/%s %s: %v", txn, card, rate, err)
	}
	return rate
}

func pickFX(rng *rand.Rand) (card, txn string) {
	card = fxCardCurrencies[rng.IntN(len(fxCardCurrencies))]
	txn = fxTxnCurrencies[rng.IntN(len(fxTxnCurrencies))]
	return card, txn
}

func fxAmount(rng *rand.Rand) int64 {
	switch rng.IntN(3) {
	case 0:
		return 1 + rng.Int64N(20) // a few minor units, where rounding bites
	case 1:
		return 1 + rng.Int64N(100_000)
	}
	return 1 + rng.Int64N(10_000_000)
}

// splitTxn cuts n into 1 to 5 positive pieces.
func splitTxn(rng *rand.Rand, n int64) []int64 {
	var out []int64
	for k := rng.IntN(5); k > 0 && n > 1; k-- {
		p := 1 + rng.Int64N(n-1)
		if rng.IntN(2) == 0 {
			p = 1 + rng.Int64N(min(n-1, 3))
		}
		out = append(out, p)
		n -= p
	}
	return append(out, n)
}

// TestForeignAuthorizationReversedWholeReleasesEverything is point 1 of
// issue 17: over random amounts, rates and currency pairs (exponents 0, 2
// and 3), authorize then reverse all of it — implied (no amount), explicit
// (the whole amount) or in pieces that add up to it — leaves nothing held,
// the card's available balance exactly as before, and the authorization
// REVERSED having released its amount and its fee.
func TestForeignAuthorizationReversedWholeReleasesEverything(t *testing.T) {
	t.Parallel()
	f := newFXCards(t)
	rng := rand.New(rand.NewPCG(testseed.Seed(t, "./internal/network", "network.seed", 17), 1))
	approved := 0
	for i := 0; i < 90; i++ {
		card, txn := pickFX(rng)
		rate := f.setRandomRate(t, rng, txn, card)
		amount := fxAmount(rng)
		avail0, held0 := f.balances(t, card)
		a := f.authorize(t, card, txn, amount)
		if !a.Approved {
			continue // 05: converts beyond the maximum; nothing moved
		}
		approved++
		if txn != card && a.Fee < 1 {
			t.Fatalf("%d %s → %s @%s: fee %d, a cross-border fee rounds up to at least one minor unit", amount, txn, card, rate, a.Fee)
		}
		var pieces []int64
		switch i % 3 {
		case 0:
			pieces = []int64{0} // implied: everything
		case 1:
			pieces = []int64{amount}
		default:
			pieces = splitTxn(rng, amount)
		}
		var released int64
		var last *network.HoldResult
		for _, p := range pieces {
			last = f.reverse(t, a.AuthID, p)
			released += last.Released
		}
		avail, held := f.balances(t, card)
		if held != held0 || avail != avail0 || last.Status != network.AuthReversed || last.Held != 0 ||
			released != a.CardAmount+a.Fee {
			t.Fatalf("%d %s → %s card @%s (hold %d + fee %d), reversed as %v: released %d, status %s, held %d (was %d), available %d (was %d)",
				amount, txn, card, rate, a.CardAmount, a.Fee, pieces, released, last.Status, held, held0, avail, avail0)
		}
	}
	if approved < 60 {
		t.Fatalf("only %d of 90 authorizations approved: the test exercises too little", approved)
	}
	mustVerify(t, f.l)
}

// TestForeignAuthorizationPiecesThenClearingLeaveNothingHeld: partial
// reversals and then a clearing of the rest (or of part of it, the
// clearing releasing what it does not take) leave nothing held, and what
// the card paid is exactly what the hold did not give back.
func TestForeignAuthorizationPiecesThenClearingLeaveNothingHeld(t *testing.T) {
	t.Parallel()
	f := newFXCards(t)
	rng := rand.New(rand.NewPCG(testseed.Seed(t, "./internal/network", "network.seed", 17), 2))
	for i := 0; i < 60; i++ {
		card, txn := pickFX(rng)
		rate := f.setRandomRate(t, rng, txn, card)
		amount := fxAmount(rng)
		avail0, _ := f.balances(t, card)
		a := f.authorize(t, card, txn, amount)
		if !a.Approved {
			continue
		}
		pieces := splitTxn(rng, amount)
		var released int64
		for _, p := range pieces[:len(pieces)-1] {
			released += f.reverse(t, a.AuthID, p).Released
		}
		rest := pieces[len(pieces)-1]
		capture := rest
		if i%2 == 1 && rest > 1 {
			capture = 1 + rng.Int64N(rest-1)
		}
		c := f.clear(t, a.AuthID, capture)
		avail, held := f.balances(t, card)
		paid := c.Captured + c.Fee
		if held != 0 || c.Held != 0 || c.Status != network.AuthCleared || released+paid+c.Released != a.CardAmount+a.Fee ||
			avail0-avail != paid || (capture == rest && c.Released != 0) {
			t.Fatalf("%d %s → %s card @%s (hold %d + fee %d): reversed %v, cleared %d: released %d, captured %d + fee %d, released at clearing %d, held %d, available %d (was %d)",
				amount, txn, card, rate, a.CardAmount, a.Fee, pieces[:len(pieces)-1], capture, released, c.Captured, c.Fee, c.Released,
				held, avail, avail0)
		}
	}
	mustVerify(t, f.l)
}

// TestCrossBorderFeeOfAFewMinorUnits is point 2 of issue 17: the fee is
// rounded up, so a card amount of a few minor units pays one minor unit of
// fee, not zero; and who pays the odd unit at each step is pinned.
func TestCrossBorderFeeOfAFewMinorUnits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFXCards(t)
	if _, err := f.l.FX.Set(ctx, "EUR", "USD", "1.1", 0); err != nil {
		t.Fatal(err)
	}
	for amount := int64(1); amount <= 12; amount++ {
		a := f.authorize(t, "USD", "EUR", amount)
		// amount × 1.1 rounded up; 1.5 % of that rounded up is 1.
		want := (amount*11 + 9) / 10
		if !a.Approved || a.CardAmount != want || a.Fee != 1 {
			t.Fatalf("%d EUR cents at 1.1: %+v, want card amount %d and fee 1", amount, a, want)
		}
		f.reverse(t, a.AuthID, 0)
	}
	// Authorization: 10.01 EUR × 1.1 = 11.011 → 11.02 USD (the cardholder
	// pays the odd unit), fee 0.16530 → 0.17.
	a := f.authorize(t, "USD", "EUR", 10_01)
	if a.CardAmount != 11_02 || a.Fee != 17 {
		t.Fatalf("authorization %+v", a)
	}
	// Reversal of 5.00 EUR: its share of the hold, rounded down (the card
	// receives): 1102 × 500/1001 = 550.45 → 550, fee 17 × 500/1001 = 8.49 → 8.
	if r := f.reverse(t, a.AuthID, 5_00); r.Released != 5_58 || r.Held != 11_19-5_58 {
		t.Fatalf("partial reversal %+v", r)
	}
	// Reversal of the remaining 5.01 EUR: exactly what is left.
	if r := f.reverse(t, a.AuthID, 5_01); r.Released != 11_19-5_58 || r.Held != 0 || r.Status != network.AuthReversed {
		t.Fatalf("last reversal %+v", r)
	}
	// Clearing of part: its share rounded up (the cardholder pays):
	// 1102 × 300/1001 = 330.27 → 331, fee 17 × 300/1001 = 5.09 → 6.
	a = f.authorize(t, "USD", "EUR", 10_01)
	if c := f.clear(t, a.AuthID, 3_00); c.Captured != 3_31 || c.Fee != 6 || c.Released != 11_19-3_37 || c.Held != 0 {
		t.Fatalf("partial clearing %+v", c)
	}
	mustVerify(t, f.l)
}
