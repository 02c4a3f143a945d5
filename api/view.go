package api

import (
	"time"

	"github.com/paygate/gateway/postings"
)

// Rendering helpers shared by the answers.

// timestampLayout is the spec's UTC timestamp, YYYY-MM-DDThh:mm:ssZ.
const timestampLayout = "2006-01-02T15:04:05Z"

func timestamp(t time.Time) string { return t.UTC().Format(timestampLayout) }

// timestampOrNil renders an optional time as a string or JSON null.
func timestampOrNil(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := timestamp(*t)
	return &s
}

// money pairs minor units with their currency for rendering. An unknown code
// leaves the currency empty, which postings.Money refuses to encode: the
// answer becomes a logged internal error instead of a wrong amount.
func money(minor int64, code string) postings.Money {
	cur, err := postings.LookupCurrency(code)
	if err != nil {
		return postings.Money{Minor: minor}
	}
	return postings.Money{Minor: minor, Currency: cur}
}
