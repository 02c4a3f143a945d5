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

// RateOne is the rate of a currency to itself, and of the same number of
// whole units between two currencies (a limit without a quoted rate).
var RateOne = MustRate("1")

// Convert converts minor units of from into minor units of to at rate
// (units of to for one unit of from), rounded in direction r: RoundDown for
// an amount the merchant or card receives, RoundUp for one it pays. The
// product is exact (an amount has at most 16 digits, a rate 20, the context
// 40); only the final step to whole minor units rounds. A result of zero
// ("converts to less than one minor unit") or above AmountMinorMax is
// refused.
func Convert(minor int64, from, to Currency, rate Rate, r Rounding) (int64, error) {
	if err := checkConversion(minor, rate, r); err != nil {
		return 0, err
	}
	ctx := decimalCtx
	ctx.Rounding = r.apdRounder()
	// minor × 10^-from.exp is the amount in units; × rate gives target units;
	// × 10^to.exp gives target minor units.
	x := apd.New(minor, to.Exponent-from.Exponent)
	var product apd.Decimal
	cond, err := ctx.Mul(&product, x, &rate.d)
	if err != nil || cond.Inexact() {
		return 0, Errorf(EINTERNAL, "conversion arithmetic failed: %v", err)
	}
	return convertedMinor(&ctx, &product, to, r)
}

// ConvertByInverse converts minor units of from into minor units of to at
// the inverse of rate, a rate quoted from to into from: the amount of to
// that rate turns into minor of from. A withdrawal from a card uses it: the
// merchant receives minor units of the funding currency, and the card pays
// minor / rate(card → funding), rounded up. Dividing once, rather than
// multiplying by a rounded inverse rate, keeps the rounding to this one
// step: the quotient is rounded in direction r at 40 digits, which holds
// every integer the result can reach, so the final step gives exactly the
// floor or ceiling of the true quotient.
func ConvertByInverse(minor int64, from, to Currency, rate Rate, r Rounding) (int64, error) {
	if err := checkConversion(minor, rate, r); err != nil {
		return 0, err
	}
	ctx := decimalCtx
	ctx.Rounding = r.apdRounder()
	x := apd.New(minor, to.Exponent-from.Exponent)
	var quo apd.Decimal
	if _, err := ctx.Quo(&quo, x, &rate.d); err != nil {
		return 0, Errorf(EINTERNAL, "conversion arithmetic failed: %v", err)
	}
	return convertedMinor(&ctx, &quo, to, r)
}

func checkConversion(minor int64, rate Rate, r Rounding) error {
	if !r.valid() {
		return Errorf(EINTERNAL, "conversion without a rounding direction")
	}
	if rate.IsZero() {
		return Errorf(EINTERNAL, "conversion without a rate")
	}
	if minor <= 0 || minor > AmountMinorMax {
		return FieldErrorf("amount", "must lie between 1 and %d minor units", AmountMinorMax)
	}
	return nil
}

func convertedMinor(ctx *apd.Context, d *apd.Decimal, to Currency, r Rounding) (int64, error) {
	// Bounded before the integer step: rates up to 10^9 and a change of
	// exponent make values far above int64 possible.
	if d.Cmp(apd.New(AmountMinorMax, 0)) > 0 {
		return 0, FieldErrorf("amount", "converted amount exceeds the maximum")
	}
	out, err := r.integral(ctx, d)
	if err != nil {
		return 0, Errorf(EINTERNAL, "conversion rounding: %v", err)
	}
	if out > AmountMinorMax {
		return 0, FieldErrorf("amount", "converted amount exceeds the maximum")
	}
	if out <= 0 {
		return 0, FieldErrorf("amount", "converts to less than one minor unit of %s", to.Code)
	}
	return out, nil
}

// ApplySpread returns the client rate for a mid-market rate and a spread in
// basis points, mid × (1 − bps/10⁴), computed exactly and cut to
// rateDigitsMax significant digits in direction r. The merchant always gets
// the worse side, so the gateway's callers pass RoundDown: the spread is
// taken off the rate of the direction the money flows in.
func ApplySpread(mid Rate, spreadBps int64, r Rounding) (Rate, error) {
	if !r.valid() {
		return Rate{}, Errorf(EINTERNAL, "spread without a rounding direction")
	}
	if spreadBps < 0 || spreadBps >= BasisPointsMax {
		return Rate{}, FieldErrorf("spread", "must be between 0 and 9999 basis points")
	}
	ctx := decimalCtx
	ctx.Precision = rateDigitsMax
	ctx.Rounding = r.apdRounder()
	factor := apd.New(BasisPointsMax-spreadBps, -4)
	var out Rate
	if _, err := ctx.Mul(&out.d, &mid.d, factor); err != nil {
		return Rate{}, Errorf(EINTERNAL, "spread: %v", err)
	}
	out.d.Reduce(&out.d)
	return out, nil
}
