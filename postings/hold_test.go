package postings

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

// randomHold draws an authorization between two currencies of exponent 0, 2
// or 3 (the same currency one time in five) with an amount and a rate that
// convert to at least one minor unit.
func randomHold(t *testing.T, rng *rand.Rand) Hold {
	t.Helper()
	for {
		txn := exponentCurrencies[rng.IntN(3)]
		card := exponentCurrencies[rng.IntN(3)]
		if rng.IntN(5) == 0 {
			card = txn
		} else if card.Code == txn.Code {
			card = MustCurrency("EUR")
			if txn.Code == "USD" {
				card = MustCurrency("BHD")
			}
		}
		var amount int64
		if rng.IntN(3) == 0 {
			amount = 1 + rng.Int64N(200) // a few minor units
		} else {
			amount = randomAmount(rng)
		}
		h, err := NewHold(amount, txn, card, randomRate(rng))
		if err == nil {
			return h
		}
	}
}

// splitWhole cuts n into 1 to 6 positive pieces.
func splitWhole(rng *rand.Rand, n int64) []int64 {
	k := 1 + rng.IntN(6)
	var out []int64
	for i := 1; i < k && n > 1; i++ {
		p := 1 + rng.Int64N(n-1)
		if rng.IntN(3) == 0 {
			p = 1 + rng.Int64N(min(n-1, 3)) // tiny pieces, where rounding bites
		}
		out = append(out, p)
		n -= p
	}
	return append(out, n)
}

// TestNewHoldRoundsAgainstTheCardholder: at authorization the cardholder
// pays the odd minor unit of the conversion and of the fee, by less than one
// unit each.
func TestNewHoldRoundsAgainstTheCardholder(t *testing.T) {
	rng := rand.New(rand.NewPCG(propertySeed(t, 17), 6))
	for i := 0; i < runs(20_000); i++ {
		h := randomHold(t, rng)
		if h.Txn.Code == h.Card.Code {
			if h.Amount != h.TxnAmount || h.Fee != 0 {
				t.Fatalf("same-currency hold %+v", h)
			}
			continue
		}
		exact := new(big.Rat).Mul(new(big.Rat).SetInt64(h.TxnAmount), pow10Rat(h.Card.Exponent-h.Txn.Exponent))
		exact.Mul(exact, rateRat(h.Rate))
		if _, c := ratFloorCeil(exact); c.Int64() != h.Amount {
			t.Fatalf("hold %+v: amount %d, want the ceiling of %s", h, h.Amount, exact.FloatString(6))
		}
		fee := new(big.Rat).SetFrac(big.NewInt(h.Amount*CrossBorderFeeBps), big.NewInt(10_000))
		if _, c := ratFloorCeil(fee); c.Int64() != h.Fee || h.Fee < 1 {
			t.Fatalf("hold %+v: fee %d, want the ceiling of %s (at least 1)", h, h.Fee, fee.FloatString(6))
		}
	}
	// The example of the issue: a card amount of a few minor units pays a
	// fee of one unit, not zero.
	h, err := NewHold(3, MustCurrency("USD"), MustCurrency("EUR"), MustRate("0.92"))
	if err != nil || h.Amount != 3 || h.Fee != 1 {
		t.Fatalf("NewHold(0.03 USD → EUR @0.92) = %+v, %v; want 3 + fee 1", h, err)
	}
}

// TestHoldWholeReversalReleasesEverything: authorize, then reverse all of
// it, in one message or in pieces in any order: the releases add up to the
// whole hold, fee included, with nothing left.
func TestHoldWholeReversalReleasesEverything(t *testing.T) {
	rng := rand.New(rand.NewPCG(propertySeed(t, 17), 7))
	for i := 0; i < runs(20_000); i++ {
		h := randomHold(t, rng)
		var reversed, released, releasedFee int64
		for _, piece := range splitWhole(rng, h.TxnAmount) {
			p, err := h.Reverse(reversed, piece)
			if err != nil {
				t.Fatalf("hold %+v: Reverse(%d, %d): %v", h, reversed, piece, err)
			}
			if p.Amount < 0 || p.Fee < 0 {
				t.Fatalf("hold %+v: Reverse(%d, %d) = %+v", h, reversed, piece, p)
			}
			reversed += piece
			released += p.Amount
			releasedFee += p.Fee
			// Cumulatively each reversal gives back its exact share rounded
			// down: never more, and less by under one unit.
			exactA := new(big.Rat).SetFrac(big.NewInt(0).Mul(big.NewInt(h.Amount), big.NewInt(reversed)), big.NewInt(h.TxnAmount))
			if f, _ := ratFloorCeil(exactA); f.Int64() != released {
				t.Fatalf("hold %+v: after reversing %d, released %d; want floor(%s)", h, reversed, released, exactA.FloatString(4))
			}
			open, err := h.Open(reversed)
			if err != nil || open.Amount != h.Amount-released || open.Fee != h.Fee-releasedFee {
				t.Fatalf("hold %+v: Open(%d) = %+v, %v after releasing %d + %d", h, reversed, open, err, released, releasedFee)
			}
		}
		if released != h.Amount || releasedFee != h.Fee {
			t.Fatalf("hold %+v: reversing all of it released %d + fee %d", h, released, releasedFee)
		}
	}
}

// TestHoldPiecesThenClearingLeaveNothing: partial reversals followed by a
// clearing of the rest capture exactly what is open; a clearing of less
// captures at most what is open (the ledger releases the rest); either way
// captured + released is the whole hold.
func TestHoldPiecesThenClearingLeaveNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(propertySeed(t, 17), 8))
	for i := 0; i < runs(20_000); i++ {
		h := randomHold(t, rng)
		pieces := splitWhole(rng, h.TxnAmount)
		var reversed int64
		released := HoldPart{}
		for _, piece := range pieces[:len(pieces)-1] {
			p, err := h.Reverse(reversed, piece)
			if err != nil {
				t.Fatal(err)
			}
			reversed += piece
			released.Amount += p.Amount
			released.Fee += p.Fee
		}
		last := pieces[len(pieces)-1]
		exactRest := rng.IntN(2) == 0
		if !exactRest && last > 1 {
			last = 1 + rng.Int64N(last-1)
		}
		open, err := h.Open(reversed)
		if err != nil {
			t.Fatal(err)
		}
		c, err := h.Capture(reversed, last)
		if err != nil {
			t.Fatalf("hold %+v: Capture(%d, %d): %v", h, reversed, last, err)
		}
		if c.Amount < 1 || c.Amount > open.Amount || c.Fee < 0 || c.Fee > open.Fee {
			t.Fatalf("hold %+v: Capture(%d, %d) = %+v, open %+v", h, reversed, last, c, open)
		}
		if last == h.TxnAmount-reversed && c != open {
			t.Fatalf("hold %+v: capturing the rest %d took %+v, open %+v", h, last, c, open)
		}
		rest := HoldPart{open.Amount - c.Amount, open.Fee - c.Fee}
		if released.Amount+c.Amount+rest.Amount != h.Amount || released.Fee+c.Fee+rest.Fee != h.Fee {
			t.Fatalf("hold %+v: released %+v captured %+v rest %+v do not add up", h, released, c, rest)
		}
		// The cardholder pays the odd unit of a partial clearing: it
		// charges at least the exact share of what it clears.
		exactA := new(big.Rat).SetFrac(big.NewInt(0).Mul(big.NewInt(h.Amount), big.NewInt(reversed+last)), big.NewInt(h.TxnAmount))
		if _, ce := ratFloorCeil(exactA); ce.Int64() != released.Amount+c.Amount {
			t.Fatalf("hold %+v: reversed %d then cleared %d: %d + %d, want ceil(%s)", h, reversed, last, released.Amount, c.Amount, exactA.FloatString(4))
		}
	}
}

func TestHoldOverCapture(t *testing.T) {
	usd, eur := MustCurrency("USD"), MustCurrency("EUR")
	h, err := NewHold(1000, usd, eur, MustRate("0.92")) // 9.20 EUR + fee 0.14
	if err != nil || h.Amount != 920 || h.Fee != 14 {
		t.Fatalf("NewHold = %+v, %v", h, err)
	}
	c, err := h.Capture(0, 1200) // 2.00 USD above: 1.84 EUR + fee 0.03
	if err != nil || c.Amount != 920+184 || c.Fee != 14+3 {
		t.Fatalf("Capture above = %+v, %v", c, err)
	}
	same, err := NewHold(1000, usd, usd, Rate{})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := same.Capture(0, 1500); err != nil || c.Amount != 1500 || c.Fee != 0 {
		t.Fatalf("same-currency Capture above = %+v, %v", c, err)
	}
}

func TestHoldRefusesWhatIsNotOpen(t *testing.T) {
	h, err := NewHold(1000, MustCurrency("USD"), MustCurrency("JPY"), MustRate("149.85"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ reversed, txn int64 }{{0, 0}, {0, 1001}, {600, 401}, {0, -1}} {
		if _, err := h.Reverse(tt.reversed, tt.txn); AsError(err).Field != "amount" {
			t.Errorf("Reverse(%d, %d): %v, want a refusal naming amount", tt.reversed, tt.txn, err)
		}
	}
	if _, err := h.Reverse(1000, 1); ErrorCode(err) != EINTERNAL {
		t.Errorf("Reverse of a closed hold: %v", err)
	}
	if _, err := h.Capture(0, 0); AsError(err).Field != "amount" {
		t.Errorf("Capture(0): %v", err)
	}
	if open, err := h.Open(1000); err != nil || open != (HoldPart{}) {
		t.Errorf("Open of a fully reversed hold = %+v, %v", open, err)
	}
	if _, err := NewHold(0, MustCurrency("USD"), MustCurrency("JPY"), MustRate("1")); err == nil {
		t.Error("NewHold(0) accepted")
	}
	// 1 JPY is 0.6673 US cents: the hold rounds up to one cent, fee one cent.
	if h, err := NewHold(1, MustCurrency("JPY"), MustCurrency("USD"), MustRate("0.006673")); err != nil || h.Amount != 1 || h.Fee != 1 {
		t.Errorf("NewHold(1 JPY → USD) = %+v, %v; want 1 + fee 1", h, err)
	}
}
