package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/cockroachdb/apd/v3"
)

// Decimal is an exact decimal number: an amount, a balance or a rate, as the
// gateway writes it. On the wire it is a JSON number written with exactly
// the currency's decimals (12.50, 1500); Decimal keeps that text byte for
// byte, so that nothing passes through a binary float. Compare and compute
// with Apd, or with the minor units of the currency; never convert to
// float64.
//
// The zero value is unset: it marshals as an error, so that a request never
// sends an amount the caller forgot. Optional amounts are *Decimal.
type Decimal struct {
	text string
}

// numberRe is the JSON number grammar (RFC 8259 section 6), which is also
// what the gateway accepts in a string amount.
var numberRe = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// decimalTextMax bounds the text of a Decimal: the gateway's largest amount
// has 20 digits; 64 leaves room for exponents and rates without letting a
// hostile answer make the client keep megabytes.
const decimalTextMax = 64

// ParseDecimal reads s, a JSON number ("12.50", "-3", "1e2"). It is exact:
// the text is kept as given.
func ParseDecimal(s string) (Decimal, error) {
	if len(s) > decimalTextMax || !numberRe.MatchString(s) {
		return Decimal{}, fmt.Errorf("client: %.80q is not a decimal number", s)
	}
	return Decimal{text: s}, nil
}

// MustDecimal is ParseDecimal for constants; it panics on a malformed s.
func MustDecimal(s string) Decimal {
	d, err := ParseDecimal(s)
	if err != nil {
		panic(err)
	}
	return d
}

// DecimalFromApd is the decimal x in plain notation (no exponent).
func DecimalFromApd(x *apd.Decimal) Decimal {
	return Decimal{text: x.Text('f')}
}

// IsSet reports whether d holds a number (the zero value does not).
func (d Decimal) IsSet() bool { return d.text != "" }

// String is the number's text as received or given; "" when unset.
func (d Decimal) String() string { return d.text }

// Apd is the number as an apd.Decimal, for exact arithmetic.
func (d Decimal) Apd() (*apd.Decimal, error) {
	if d.text == "" {
		return nil, errDecimalUnset
	}
	x, _, err := apd.NewFromString(d.text)
	return x, err
}

// Cmp compares two decimals by value (12.5 equals 12.50): -1, 0 or +1. An
// unset decimal compares below every number.
func (d Decimal) Cmp(e Decimal) int {
	a, errA := d.Apd()
	b, errB := e.Apd()
	switch {
	case errA != nil && errB != nil:
		return 0
	case errA != nil:
		return -1
	case errB != nil:
		return 1
	}
	return a.Cmp(b)
}

var errDecimalUnset = errors.New("client: the decimal is not set")

// MarshalJSON writes the number as a JSON number, its text unchanged.
func (d Decimal) MarshalJSON() ([]byte, error) {
	if d.text == "" {
		return nil, errDecimalUnset
	}
	return []byte(d.text), nil
}

// UnmarshalJSON reads a JSON number exactly, or a string holding one (the
// gateway accepts both in requests, and callbacks recorded before rates
// were numbers carry fxRate as a string). null leaves d unchanged, as for
// every JSON type.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	v, err := ParseDecimal(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}
