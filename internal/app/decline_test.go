package app

import (
	"encoding/json"
	"testing"
	"time"
)

// The router logs a paused card's authorization only when its fields are
// what POST /network/authorize accepts; the amount is exact, as a number
// or a string.
func TestMoveDecline(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	const card = "crd_a1xxxxxxxxxxxxxxxxxx"
	for _, tc := range []struct {
		name, msg, amount, currency string
		ok                          bool
		minor                       int64
	}{
		{"a string amount", "m-1", `"12.50"`, "USD", true, 12_50},
		{"a number amount", "m-1", `12.5`, "USD", true, 12_50},
		{"no decimals in JPY", "m-1", `"1200"`, "JPY", true, 1200},
		{"too many decimals", "m-1", `"1.005"`, "USD", false, 0},
		{"zero", "m-1", `0`, "USD", false, 0},
		{"no amount", "m-1", ``, "USD", false, 0},
		{"an unknown currency", "m-1", `"1.00"`, "XXX", false, 0},
		{"a lower-case currency", "m-1", `"1.00"`, "usd", false, 0},
		{"no message id", "", `"1.00"`, "USD", false, 0},
		{"a message id with a space", "m 1", `"1.00"`, "USD", false, 0},
	} {
		f := &authorizeFields{MessageID: tc.msg, CardNo: card, Amount: json.RawMessage(tc.amount), Currency: tc.currency}
		d, ok := moveDecline(f, now)
		if ok != tc.ok || (ok && (d.Amount != tc.minor || d.Currency != tc.currency || d.MessageID != tc.msg || d.CardNo != card || !d.DeclinedAt.Equal(now))) {
			t.Errorf("%s: %+v %v, want ok %v, %d minor", tc.name, d, ok, tc.ok, tc.minor)
		}
	}
	if _, ok := moveDecline(&authorizeFields{MessageID: "m", CardNo: "crd_a1 x", Amount: json.RawMessage(`1`), Currency: "USD"}, now); ok {
		t.Errorf("a card number the handler refuses was accepted")
	}
}
