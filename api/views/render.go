package views

import (
	"time"

	"github.com/paygate/gateway/postings"
)

// Rendering helpers shared by the answers.

// TimestampLayout is the spec's UTC timestamp, YYYY-MM-DDThh:mm:ssZ.
const TimestampLayout = "2006-01-02T15:04:05Z"

// Timestamp renders a time as every answer does: UTC, to the second.
func Timestamp(t time.Time) string { return t.UTC().Format(TimestampLayout) }

// TimestampOrNil renders an optional time as a string or JSON null.
func TimestampOrNil(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := Timestamp(*t)
	return &s
}

// Money pairs minor units with their currency for rendering. An unknown code
// leaves the currency empty, which postings.Money refuses to encode: the
// answer becomes a logged internal error instead of a wrong amount.
func Money(minor int64, code string) postings.Money {
	cur, err := postings.LookupCurrency(code)
	if err != nil {
		return postings.Money{Minor: minor}
	}
	return postings.Money{Minor: minor, Currency: cur}
}

// stringOrNil is s, or JSON null when s is empty.
func stringOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
