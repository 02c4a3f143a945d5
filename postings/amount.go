package postings

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
)

// AmountMinorMax is the largest amount of one posting, in minor units of any
// currency: 10^15 (ten trillion USD, a quadrillion JPY). It keeps every sum the
// ledger computes inside int64 with room to spare, and refuses absurd input
// before it reaches arithmetic.
const AmountMinorMax int64 = 1_000_000_000_000_000

// amountTextBytesMax bounds the text of an amount before apd sees it, so that
// "1e999999999" style input costs nothing.
const amountTextBytesMax = 40

// decimalCtx is the one apd context of the gateway. Precision 40 holds any
// amount times any rate exactly; every rounding that happens states its own
// direction (rounding.go, fx.go: a copy of this context with the mode of a
// Rounding), and the traps turn an out-of-range step into an error instead
// of a silent result. Inexact is not trapped: a conversion checks that its
// product is exact, and a division rounds on purpose.
var decimalCtx = apd.Context{
	Precision:   40,
	MaxExponent: apd.MaxExponent,
	MinExponent: apd.MinExponent,
	Traps:       apd.DefaultTraps,
	Rounding:    apd.RoundHalfEven,
}

// ParseAmount parses the decimal text of a positive amount in currency cur and
// returns it in minor units. It accepts the JSON number grammar (so "1e2" and
// "12.50" are fine) and refuses, with an EINVALID error: anything else, NaN
// and infinities, zero (also "-0"), negative values, values that carry more
// decimals than the currency has ("1.005" USD, "1.5" JPY) and values above
// AmountMinorMax. Trailing zeros are not decimals: "1.500" USD is 150.
// The value never passes through a binary float.
func ParseAmount(text string, cur Currency) (int64, error) {
	d, err := parseDecimal(text)
	if err != nil {
		return 0, err
	}
	if d.Negative && !d.IsZero() {
		return 0, FieldErrorf("amount", "must be positive")
	}
	if d.IsZero() {
		return 0, FieldErrorf("amount", "must be greater than zero")
	}
	return toMinor(d, cur)
}

// ParseSignedAmount is ParseAmount for the places that take a signed value
// (limits of zero, adjustments): zero and negatives are allowed.
func ParseSignedAmount(text string, cur Currency) (int64, error) {
	d, err := parseDecimal(text)
	if err != nil {
		return 0, err
	}
	if d.IsZero() {
		return 0, nil
	}
	neg := d.Negative
	d.Negative = false
	m, err := toMinor(d, cur)
	if neg {
		m = -m
	}
	return m, err
}

// parseDecimal checks the JSON number grammar and hands the text to apd.
func parseDecimal(text string) (*apd.Decimal, error) {
	if len(text) > amountTextBytesMax {
		return nil, FieldErrorf("amount", "is too long to be an amount")
	}
	if !isJSONNumber(text) {
		return nil, FieldErrorf("amount", "%q is not a decimal number", truncate(text, amountTextBytesMax))
	}
	// The grammar admits no NaN or infinity, so apd can only fail on an
	// exponent beyond its range.
	d, _, err := apd.NewFromString(text)
	if err != nil || d.Form != apd.Finite {
		return nil, FieldErrorf("amount", "%q is out of range", text)
	}
	return d, nil
}

// toMinor scales a non-negative finite decimal to minor units exactly.
func toMinor(d *apd.Decimal, cur Currency) (int64, error) {
	// The largest acceptable value, compared before any scaling so that a
	// huge exponent never reaches the arithmetic below.
	limit := apd.New(AmountMinorMax, -cur.Exponent)
	if d.Cmp(limit) > 0 {
		return 0, FieldErrorf("amount", "exceeds the maximum of %s %s", FormatMinor(AmountMinorMax, cur), cur.Code)
	}
	scaled := new(apd.Decimal).Set(d)
	scaled.Exponent += cur.Exponent // times 10^exponent, exactly
	var integral apd.Decimal
	cond, err := decimalCtx.RoundToIntegralExact(&integral, scaled)
	if err != nil {
		return 0, FieldErrorf("amount", "is not a valid amount")
	}
	if cond.Inexact() {
		if cur.Exponent == 0 {
			return 0, FieldErrorf("amount", "%s has no decimals", cur.Code)
		}
		return 0, FieldErrorf("amount", "%s allows at most %d decimals", cur.Code, cur.Exponent)
	}
	m, err := integral.Int64()
	if err != nil {
		return 0, FieldErrorf("amount", "is out of range")
	}
	return m, nil
}

// isJSONNumber reports whether s matches the JSON number grammar of RFC 8259:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// FormatMinor renders minor units as the decimal text of the currency, with
// exactly its number of decimals: 1234 USD is "12.34", -5 USD is "-0.05",
// 100 JPY is "100". It is the inverse of ParseAmount.
func FormatMinor(minor int64, cur Currency) string {
	neg := minor < 0
	var digits string
	if neg {
		// Negating math.MinInt64 overflows; format through uint64 instead.
		digits = strconv.FormatUint(uint64(-(minor+1))+1, 10)
	} else {
		digits = strconv.FormatInt(minor, 10)
	}
	exp := int(cur.Exponent)
	if exp > 0 {
		if len(digits) <= exp {
			digits = strings.Repeat("0", exp-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-exp] + "." + digits[len(digits)-exp:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// Money is an amount in minor units together with its currency. Its JSON form
// is a JSON number with the currency's decimals ("12.50"), written from the
// integer, never through a float.
type Money struct {
	Minor    int64
	Currency Currency
}

// String renders "12.50 USD".
func (m Money) String() string {
	return FormatMinor(m.Minor, m.Currency) + " " + m.Currency.Code
}

// MarshalJSON writes the amount as a JSON number.
func (m Money) MarshalJSON() ([]byte, error) {
	if m.Currency.Code == "" {
		return nil, fmt.Errorf("postings: Money without a currency")
	}
	return []byte(FormatMinor(m.Minor, m.Currency)), nil
}

// AddChecked adds two int64 values (minor units) and reports overflow
// instead of wrapping.
func AddChecked(a, b int64) (int64, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}
