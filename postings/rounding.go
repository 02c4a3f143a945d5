package postings

import (
	"math/bits"

	"github.com/cockroachdb/apd/v3"
)

// This file and fx.go are the one home of rounding money (docs/ledger.md,
// "Rounding"): every percentage fee, share of a hold, spread and currency
// conversion is computed here, exactly, and rounded once in the direction
// its caller names. No other package rounds an amount: they call these.

// Rounding is the direction in which an inexact amount is made whole. There
// is no default: the zero Rounding is refused, so that every call site says
// which way it rounds. The rule of the house is that rounding never creates
// money: an amount the merchant or card receives rounds down, an amount it
// pays rounds up, each by less than one minor unit.
type Rounding uint8

// The two directions. Amounts here are never negative, so down is towards
// zero (floor) and up is away from it (ceiling).
const (
	RoundDown Rounding = iota + 1 // an amount the merchant or card receives
	RoundUp                       // an amount the merchant or card pays
)

func (r Rounding) String() string {
	switch r {
	case RoundDown:
		return "down"
	case RoundUp:
		return "up"
	}
	return "invalid"
}

func (r Rounding) valid() bool { return r == RoundDown || r == RoundUp }

// apdRounder is the apd mode of r, for the contexts that round an
// intermediate result in the same direction as the final one.
func (r Rounding) apdRounder() apd.Rounder {
	if r == RoundUp {
		return apd.RoundUp
	}
	return apd.RoundDown
}

// integral rounds a non-negative finite decimal to an integer in direction
// r. Floor and Ceil, never RoundToIntegralValue: apd's integral rounding
// turns a value below 0.1 into 0 whatever its mode, which would make "round
// up" of 0.045 zero.
func (r Rounding) integral(ctx *apd.Context, d *apd.Decimal) (int64, error) {
	var out apd.Decimal
	var err error
	if r == RoundUp {
		_, err = ctx.Ceil(&out, d)
	} else {
		_, err = ctx.Floor(&out, d)
	}
	if err != nil {
		return 0, err
	}
	return out.Int64()
}

// Share returns total × part / whole rounded in direction r: the part of an
// amount that belongs to part of a whole, such as the share of a hold that a
// partial reversal releases. It is exact integer arithmetic (a 128-bit
// product), needs 0 ≤ total, 0 ≤ part ≤ whole and 0 < whole, and is never
// more than total. Share(total, whole, whole, r) is total in both
// directions: the last share of a whole is exactly what remains.
func Share(total, part, whole int64, r Rounding) (int64, error) {
	if !r.valid() {
		return 0, Errorf(EINTERNAL, "share without a rounding direction")
	}
	if total < 0 || part < 0 || whole <= 0 || part > whole {
		return 0, Errorf(EINTERNAL, "share %d × %d / %d out of range", total, part, whole)
	}
	// total·part < 2^63·whole, so the high word is below whole and Div64
	// cannot overflow; the quotient is at most total.
	hi, lo := bits.Mul64(uint64(total), uint64(part))
	q, rem := bits.Div64(hi, lo, uint64(whole))
	if rem != 0 && r == RoundUp {
		q++
	}
	return int64(q), nil
}

// BasisPointsMax is the largest percentage a fee may take: 100 %.
const BasisPointsMax = 10_000

// FeeBps returns amount × bps / 10,000 rounded in direction r: a percentage
// fee in basis points (150 is 1.5 %). The gateway's fees are paid, so its
// callers pass RoundUp: one minor unit at 1.5 % costs one minor unit, not
// zero. amount is 0 … AmountMinorMax, bps 0 … 10,000.
func FeeBps(amount, bps int64, r Rounding) (int64, error) {
	if amount < 0 || amount > AmountMinorMax {
		return 0, FieldErrorf("amount", "must lie between 0 and %d minor units", AmountMinorMax)
	}
	if bps < 0 || bps > BasisPointsMax {
		return 0, Errorf(EINTERNAL, "fee of %d basis points is outside 0..%d", bps, BasisPointsMax)
	}
	return Share(amount, bps, BasisPointsMax, r)
}
