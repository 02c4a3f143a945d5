package postings

import (
	"github.com/cockroachdb/apd/v3"
)

// Rate is an exchange rate: units of the target currency for one unit of the
// source currency (Stripe's convention: amount in A × rate = amount in B).
// It is an exact decimal; the zero Rate is invalid.
type Rate struct {
	d apd.Decimal
}

// rateDigitsMax bounds the significant digits of a rate: enough for any real
// quotation (they carry 6 to 10) and small enough to keep products exact.
const rateDigitsMax = 20

// ParseRate parses a positive decimal rate such as "0.92" or "149.85".
func ParseRate(text string) (Rate, error) {
	if len(text) > amountTextBytesMax || !isJSONNumber(text) {
		return Rate{}, FieldErrorf("rate", "%q is not a decimal number", truncate(text, amountTextBytesMax))
	}
	var r Rate
	if _, _, err := r.d.SetString(text); err != nil || r.d.Form != apd.Finite {
		return Rate{}, FieldErrorf("rate", "%q is not a finite decimal number", text)
	}
	if r.d.Sign() <= 0 {
		return Rate{}, FieldErrorf("rate", "must be positive")
	}
	r.d.Reduce(&r.d)
	if r.d.NumDigits() > rateDigitsMax {
		return Rate{}, FieldErrorf("rate", "has more than %d significant digits", rateDigitsMax)
	}
	if r.d.Cmp(apd.New(1, 9)) > 0 || r.d.Cmp(apd.New(1, -9)) < 0 {
		return Rate{}, FieldErrorf("rate", "must lie between 0.000000001 and 1000000000")
	}
	return r, nil
}

// MustRate is ParseRate for rates written in the program.
func MustRate(text string) Rate {
	r, err := ParseRate(text)
	if err != nil {
		panic(err)
	}
	return r
}

// IsZero reports whether r is the zero (invalid) Rate.
func (r Rate) IsZero() bool { return r.d.IsZero() }

// String renders the rate in plain decimal notation ("0.92").
func (r Rate) String() string { return r.d.Text('f') }

// MarshalJSON writes the rate as a JSON number.
func (r Rate) MarshalJSON() ([]byte, error) { return []byte(r.String()), nil }

// Rounding modes used when a conversion cannot be exact. The rule of the house
// (docs/ledger.md): a conversion rounds in favour of the gateway by less than
// one minor unit, so that rounding can never create money. An amount the
// merchant receives rounds down; an amount the merchant pays rounds up.
const (
	RoundReceive = apd.RoundDown
	RoundPay     = apd.RoundUp
)

// Convert converts minor units of from into minor units of to at rate, with
// the rounding mode given (RoundReceive rounds down, RoundPay rounds up; no
// other mode is accepted). The result is refused
// when it is zero or above AmountMinorMax.
func Convert(minor int64, from, to Currency, rate Rate, rounding apd.Rounder) (int64, error) {
	if rate.IsZero() {
		return 0, Errorf(EINTERNAL, "conversion without a rate")
	}
	if rounding != RoundPay && rounding != RoundReceive {
		return 0, Errorf(EINTERNAL, "conversion rounding must be RoundPay or RoundReceive")
	}
	ctx := decimalCtx
	ctx.Rounding = rounding
	// minor × 10^-from.exp is the amount in units; × rate gives target units;
	// × 10^to.exp gives target minor units.
	x := apd.New(minor, to.Exponent-from.Exponent)
	var product, integral apd.Decimal
	if _, err := ctx.Mul(&product, x, &rate.d); err != nil {
		return 0, Errorf(EINTERNAL, "conversion overflow: %v", err)
	}
	// Floor and Ceil, not RoundToIntegralValue: apd rounds a value below
	// 0.1 to zero whatever the mode, which would turn "round up" into zero.
	// Amounts and rates are positive here, so down is floor and up is ceil.
	var err error
	if rounding == RoundPay {
		_, err = ctx.Ceil(&integral, &product)
	} else {
		_, err = ctx.Floor(&integral, &product)
	}
	if err != nil {
		return 0, Errorf(EINTERNAL, "conversion rounding: %v", err)
	}
	out, err := integral.Int64()
	if err != nil || out > AmountMinorMax {
		return 0, FieldErrorf("amount", "converted amount exceeds the maximum")
	}
	if out <= 0 {
		return 0, FieldErrorf("amount", "converts to less than one minor unit of %s", to.Code)
	}
	return out, nil
}

// ApplySpread returns the client rate for a mid-market rate and a spread in
// basis points: the merchant always gets the worse side, rate × (1 − bps/10⁴),
// computed exactly and cut to rateDigitsMax significant digits downwards.
func ApplySpread(mid Rate, spreadBps int64) (Rate, error) {
	if spreadBps < 0 || spreadBps >= 10_000 {
		return Rate{}, FieldErrorf("spread", "must be between 0 and 9999 basis points")
	}
	ctx := decimalCtx
	ctx.Precision = rateDigitsMax
	ctx.Rounding = apd.RoundDown
	factor := apd.New(10_000-spreadBps, -4)
	var r Rate
	if _, err := ctx.Mul(&r.d, &mid.d, factor); err != nil {
		return Rate{}, Errorf(EINTERNAL, "spread: %v", err)
	}
	r.d.Reduce(&r.d)
	return r, nil
}

// Invert returns 1/r cut to rateDigitsMax significant digits downwards, for
// showing the rate in the other direction.
func (r Rate) Invert() Rate {
	ctx := decimalCtx
	ctx.Precision = rateDigitsMax
	ctx.Rounding = apd.RoundDown
	var out Rate
	if _, err := ctx.Quo(&out.d, apd.New(1, 0), &r.d); err != nil {
		panic(err) // r is positive and bounded: a failure is a bug.
	}
	out.d.Reduce(&out.d)
	return out
}
