package postings

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
)

// The property tests of the rounding home check each function against an
// oracle in exact rational arithmetic (math/big), independent of apd and of
// the 128-bit integer path: for amounts from one minor unit to
// AmountMinorMax, in both directions, between currencies of exponent 0, 2
// and 3.

var exponentCurrencies = []Currency{MustCurrency("JPY"), MustCurrency("USD"), MustCurrency("KWD")}

// ratFloorCeil returns floor(x) and ceil(x) of a non-negative rational.
func ratFloorCeil(x *big.Rat) (floor, ceil *big.Int) {
	q, m := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	c := new(big.Int).Set(q)
	if m.Sign() != 0 {
		c.Add(c, big.NewInt(1))
	}
	return q, c
}

func oracleRound(x *big.Rat, r Rounding) *big.Int {
	f, c := ratFloorCeil(x)
	if r == RoundUp {
		return c
	}
	return f
}

func pow10Rat(e int32) *big.Rat {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs32(e))), nil)
	if e < 0 {
		return new(big.Rat).SetFrac(big.NewInt(1), p)
	}
	return new(big.Rat).SetInt(p)
}

func abs32(e int32) int32 {
	if e < 0 {
		return -e
	}
	return e
}

// edgeAmounts are the amounts every property starts with, before random ones.
var edgeAmounts = []int64{1, 2, 3, 9, 10, 99, 100, 101, 999, 1_000_000, AmountMinorMax - 1, AmountMinorMax}

// randomAmount draws an amount in 1 … AmountMinorMax with every order of
// magnitude equally likely.
func randomAmount(rng *rand.Rand) int64 {
	digits := 1 + rng.IntN(16)
	hi := int64(1)
	for i := 0; i < digits; i++ {
		hi *= 10
	}
	return min(1+rng.Int64N(hi), AmountMinorMax)
}

// randomRate draws a rate of 1 to 20 significant digits between 10^-9 and
// 10^9, as ParseRate accepts them.
func randomRate(rng *rand.Rand) Rate {
	for {
		digits := 1 + rng.IntN(12)
		mant := rng.Int64N(pow10int(digits)) + 1
		exp := rng.IntN(19) - 9 - digits + 1
		text := fmt.Sprintf("%de%d", mant, exp)
		if r, err := ParseRate(text); err == nil {
			return r
		}
	}
}

func pow10int(n int) int64 {
	p := int64(1)
	for i := 0; i < n; i++ {
		p *= 10
	}
	return p
}

func rateRat(r Rate) *big.Rat {
	x, ok := new(big.Rat).SetString(r.String())
	if !ok {
		panic("rate " + r.String())
	}
	return x
}

func TestConvertMatchesExactArithmetic(t *testing.T) {
	rng := rand.New(rand.NewPCG(propertySeed(t, 17), 2))
	maxRat := new(big.Int).SetInt64(AmountMinorMax)
	check := func(minor int64, from, to Currency, rate Rate, r Rounding, inverse bool) {
		t.Helper()
		// exact = minor × 10^(to−from) × rate (or ÷ rate)
		exact := new(big.Rat).Mul(new(big.Rat).SetInt64(minor), pow10Rat(to.Exponent-from.Exponent))
		if inverse {
			exact.Quo(exact, rateRat(rate))
		} else {
			exact.Mul(exact, rateRat(rate))
		}
		want := oracleRound(exact, r)
		var got int64
		var err error
		if inverse {
			got, err = ConvertByInverse(minor, from, to, rate, r)
		} else {
			got, err = Convert(minor, from, to, rate, r)
		}
		switch {
		case want.Sign() == 0:
			if err == nil || AsError(err).Field != "amount" {
				t.Fatalf("%d %s→%s @%s %s (inverse %v): %d, %v; want a refusal (zero)", minor, from.Code, to.Code, rate, r, inverse, got, err)
			}
		case want.Cmp(maxRat) > 0:
			if err == nil || AsError(err).Field != "amount" {
				t.Fatalf("%d %s→%s @%s %s (inverse %v): %d, %v; want a refusal (too large)", minor, from.Code, to.Code, rate, r, inverse, got, err)
			}
		case err != nil || got != want.Int64():
			t.Fatalf("%d %s→%s @%s %s (inverse %v) = %d, %v; want %s (exact %s)", minor, from.Code, to.Code, rate, r, inverse, got, err, want, exact.FloatString(12))
		}
	}
	rates := []Rate{MustRate("1"), MustRate("0.92"), MustRate("149.85"), MustRate("0.006673"), MustRate("3"),
		MustRate("0.000000001"), MustRate("1000000000"), MustRate("1.2345678901234567891")}
	for _, from := range exponentCurrencies {
		for _, to := range exponentCurrencies {
			for _, r := range []Rounding{RoundDown, RoundUp} {
				for _, inverse := range []bool{false, true} {
					for _, minor := range edgeAmounts {
						for _, rate := range rates {
							check(minor, from, to, rate, r, inverse)
						}
					}
					for i := 0; i < runs(2000); i++ {
						check(randomAmount(rng), from, to, randomRate(rng), r, inverse)
					}
				}
			}
		}
	}
}

// TestConvertRoundingDirection pins who pays the odd minor unit: rounding
// up never gives less than the exact value and never a whole unit more;
// rounding down never gives more and never a whole unit less.
func TestConvertRoundingDirection(t *testing.T) {
	usd, eur := MustCurrency("USD"), MustCurrency("EUR")
	// 3 cents at 0.5 = 1.5 cents.
	if got, _ := Convert(3, usd, eur, MustRate("0.5"), RoundUp); got != 2 {
		t.Fatalf("RoundUp of 1.5 = %d, want 2", got)
	}
	if got, _ := Convert(3, usd, eur, MustRate("0.5"), RoundDown); got != 1 {
		t.Fatalf("RoundDown of 1.5 = %d, want 1", got)
	}
	// 10 EUR ÷ 3 (a rate with no finite inverse) = 3.333… EUR.
	if got, _ := ConvertByInverse(1000, eur, usd, MustRate("3"), RoundUp); got != 334 {
		t.Fatalf("ConvertByInverse up of 333.33… = %d, want 334", got)
	}
	if got, _ := ConvertByInverse(1000, eur, usd, MustRate("3"), RoundDown); got != 333 {
		t.Fatalf("ConvertByInverse down of 333.33… = %d, want 333", got)
	}
	// An exact quotient is not pushed up.
	if got, _ := ConvertByInverse(1000, eur, usd, MustRate("0.8"), RoundUp); got != 1250 {
		t.Fatalf("ConvertByInverse up of exactly 1250 = %d", got)
	}
	for _, r := range []Rounding{0, 3} {
		if _, err := Convert(100, usd, eur, MustRate("1"), r); ErrorCode(err) != EINTERNAL {
			t.Fatalf("Convert with rounding %d: %v, want an internal error", r, err)
		}
		if _, err := ConvertByInverse(100, usd, eur, MustRate("1"), r); ErrorCode(err) != EINTERNAL {
			t.Fatalf("ConvertByInverse with rounding %d: %v, want an internal error", r, err)
		}
	}
	for _, minor := range []int64{0, -1, AmountMinorMax + 1} {
		if _, err := Convert(minor, usd, eur, MustRate("1"), RoundUp); err == nil {
			t.Fatalf("Convert(%d) accepted", minor)
		}
	}
}

func TestShareMatchesExactArithmetic(t *testing.T) {
	rng := rand.New(rand.NewPCG(propertySeed(t, 17), 3))
	check := func(total, part, whole int64) {
		t.Helper()
		exact := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(total), big.NewInt(part)), big.NewInt(whole))
		for _, r := range []Rounding{RoundDown, RoundUp} {
			want := oracleRound(exact, r)
			got, err := Share(total, part, whole, r)
			if err != nil || got != want.Int64() {
				t.Fatalf("Share(%d, %d, %d, %s) = %d, %v; want %s", total, part, whole, r, got, err, want)
			}
			if got > total {
				t.Fatalf("Share(%d, %d, %d, %s) = %d exceeds the total", total, part, whole, r, got)
			}
		}
	}
	for _, total := range append([]int64{0}, edgeAmounts...) {
		for _, whole := range edgeAmounts {
			for _, part := range []int64{0, 1, whole / 3, whole / 2, whole - 1, whole} {
				check(total, part, whole)
			}
		}
	}
	for i := 0; i < runs(50_000); i++ {
		whole := randomAmount(rng)
		check(2*randomAmount(rng), rng.Int64N(whole+1), whole)
	}
	// The last share is the rest, in both directions.
	for _, r := range []Rounding{RoundDown, RoundUp} {
		if got, _ := Share(AmountMinorMax, 7, 7, r); got != AmountMinorMax {
			t.Fatalf("Share of the whole, %s = %d", r, got)
		}
	}
	for _, bad := range [][3]int64{{-1, 1, 2}, {1, -1, 2}, {1, 3, 2}, {1, 0, 0}} {
		if _, err := Share(bad[0], bad[1], bad[2], RoundDown); ErrorCode(err) != EINTERNAL {
			t.Fatalf("Share%v: %v, want an internal error", bad, err)
		}
	}
	if _, err := Share(1, 1, 2, 0); ErrorCode(err) != EINTERNAL {
		t.Fatalf("Share without a direction: %v", err)
	}
}

// TestFeeBpsRoundsUpFromOneMinorUnit is the class of the cross-border fee
// that was 0 for amounts of a few minor units although it rounds up: every
// positive amount at a positive rate costs at least one minor unit, and the
// fee is the exact ceiling (or floor) of amount × bps / 10⁴ from one minor
// unit to the maximum.
func TestFeeBpsRoundsUpFromOneMinorUnit(t *testing.T) {
	rng := rand.New(rand.NewPCG(propertySeed(t, 17), 4))
	check := func(amount, bps int64) {
		t.Helper()
		exact := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(amount), big.NewInt(bps)), big.NewInt(10_000))
		for _, r := range []Rounding{RoundDown, RoundUp} {
			want := oracleRound(exact, r)
			got, err := FeeBps(amount, bps, r)
			if err != nil || got != want.Int64() {
				t.Fatalf("FeeBps(%d, %d, %s) = %d, %v; want %s", amount, bps, r, got, err, want)
			}
			if r == RoundUp && amount > 0 && bps > 0 && got < 1 {
				t.Fatalf("FeeBps(%d, %d, up) = %d: a fee rounded up is never zero", amount, bps, got)
			}
		}
	}
	for _, amount := range append([]int64{0}, edgeAmounts...) {
		for _, bps := range []int64{0, 1, 50, CrossBorderFeeBps, 9_999, 10_000} {
			check(amount, bps)
		}
	}
	for i := 0; i < runs(50_000); i++ {
		check(randomAmount(rng), rng.Int64N(10_001))
	}
	for amount := int64(1); amount <= 66; amount++ {
		if got, _ := FeeBps(amount, CrossBorderFeeBps, RoundUp); got != 1 {
			t.Fatalf("1.5%% of %d minor units rounded up = %d, want 1", amount, got)
		}
	}
	for _, bad := range [][2]int64{{-1, 150}, {AmountMinorMax + 1, 150}, {100, -1}, {100, 10_001}} {
		if _, err := FeeBps(bad[0], bad[1], RoundUp); err == nil {
			t.Fatalf("FeeBps%v accepted", bad)
		}
	}
}

func TestApplySpreadRoundsTheRateInItsDirection(t *testing.T) {
	rng := rand.New(rand.NewPCG(propertySeed(t, 17), 5))
	for i := 0; i < 5000; i++ {
		mid, bps := randomRate(rng), rng.Int64N(10_000)
		exact := new(big.Rat).Mul(rateRat(mid), big.NewRat(10_000-bps, 10_000))
		down, err := ApplySpread(mid, bps, RoundDown)
		if err != nil {
			t.Fatal(err)
		}
		up, err := ApplySpread(mid, bps, RoundUp)
		if err != nil {
			t.Fatal(err)
		}
		if rateRat(down).Cmp(exact) > 0 || rateRat(up).Cmp(exact) < 0 {
			t.Fatalf("ApplySpread(%s, %d): down %s, up %s around exact %s", mid, bps, down, up, exact.FloatString(25))
		}
	}
	if _, err := ApplySpread(MustRate("1"), 10, 0); ErrorCode(err) != EINTERNAL {
		t.Fatalf("ApplySpread without a direction: %v", err)
	}
}
