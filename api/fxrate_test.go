package api

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"testing"
)

// rawField returns the raw JSON of one member of an object.
func rawField(t *testing.T, obj json.RawMessage, name string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		t.Fatalf("%s: %v", obj, err)
	}
	return m[name]
}

// ratio is a decimal JSON number as an exact fraction.
func ratio(t *testing.T, raw json.RawMessage) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(string(raw))
	if !ok || len(raw) == 0 || raw[0] == '"' {
		t.Fatalf("%s is not a JSON number", raw)
	}
	return r
}

// TestFXRateIsOneRepresentation: every fxRate the gateway writes — a
// transfer's answer, an authorization's answer on the internal API, the
// authorization callback — is a JSON number written exactly (docs/api.md,
// "Decimals"), and a transfer's fxRate is the rate of its own direction:
// card units per funding unit IN, funding units per card unit OUT
// (issue 17, point 10).
func TestFXRateIsOneRepresentation(t *testing.T) {
	t.Parallel()
	n := newNetServer(t)
	ctx := context.Background()
	for _, r := range []struct {
		base, quote, mid string
		bps              int64
	}{{"USD", "EUR", "0.92", 50}, {"EUR", "USD", "1.08", 50}} {
		if _, err := n.l.FX.Set(ctx, r.base, r.quote, r.mid, r.bps); err != nil {
			t.Fatal(err)
		}
	}
	sh := n.fundedShop() // USD and EUR funding
	card := n.createCard(sh, `{"bin":"453202","currency":"EUR","amount":"50.00"}`).CardNo
	cent := big.NewRat(1, 100)

	// IN: 33.33 USD buy the card 33.33 × 0.9154 = 30.510282 EUR, down.
	a := n.request(&sh, "POST", "/shop/card/transfer",
		fmt.Sprintf(`{"cardNo":%q,"amount":"33.33","currency":"USD","direction":"IN"}`, card)).must(t, 200, 200)
	rate := ratio(t, rawField(t, a.Data, "fxRate"))
	amount, cardAmount := ratio(t, rawField(t, a.Data, "amount")), ratio(t, rawField(t, a.Data, "cardAmount"))
	if rate.Cmp(big.NewRat(9154, 10000)) != 0 || ratio(t, rawField(t, a.Data, "midRate")).Cmp(big.NewRat(92, 100)) != 0 {
		t.Errorf("IN: fxRate %s, want 0.92 × (1 − 0.005) = 0.9154 EUR per USD: %s", rate.FloatString(6), a.raw)
	}
	got := new(big.Rat).Mul(amount, rate) // card units
	if cardAmount.Cmp(got) > 0 || new(big.Rat).Add(cardAmount, cent).Cmp(got) <= 0 {
		t.Errorf("IN: cardAmount %s is not amount × fxRate (%s) rounded down", cardAmount.FloatString(2), got.FloatString(6))
	}

	// OUT: the merchant receives 10.00 USD; fxRate is USD per EUR (the
	// EUR→USD rate less the spread, 1.08 × 0.995 = 1.0746), and the card
	// pays amount ÷ fxRate = 9.3058… EUR, up.
	a = n.request(&sh, "POST", "/shop/card/transfer",
		fmt.Sprintf(`{"cardNo":%q,"amount":"10.00","currency":"USD","direction":"OUT"}`, card)).must(t, 200, 200)
	rate = ratio(t, rawField(t, a.Data, "fxRate"))
	amount, cardAmount = ratio(t, rawField(t, a.Data, "amount")), ratio(t, rawField(t, a.Data, "cardAmount"))
	if rate.Cmp(big.NewRat(10746, 10000)) != 0 || ratio(t, rawField(t, a.Data, "midRate")).Cmp(big.NewRat(108, 100)) != 0 {
		t.Errorf("OUT: fxRate %s, want 1.08 × (1 − 0.005) = 1.0746 USD per EUR: %s", rate.FloatString(6), a.raw)
	}
	got = new(big.Rat).Quo(amount, rate) // card units
	if cardAmount.Cmp(got) < 0 || new(big.Rat).Sub(cardAmount, cent).Cmp(got) >= 0 {
		t.Errorf("OUT: cardAmount %s is not amount ÷ fxRate (%s) rounded up", cardAmount.FloatString(2), got.FloatString(6))
	}

	// An authorization in USD on the EUR card: the internal answer and the
	// callback's data both carry a number.
	d, raw := n.authorizeWith(n.msg(), card, "5.00", "USD")
	if !d.Approved {
		t.Fatalf("authorization: %s", raw.raw)
	}
	ratio(t, rawField(t, raw.Data, "fxRate"))
	var kind string
	if err := n.l.DB().NewRaw(`select jsonb_typeof(payload->'data'->'fxRate') from events
		where event_type = 'authorization.approved' and payload->'data'->>'authId' = ?`, *d.AuthID).Scan(ctx, &kind); err != nil {
		t.Fatal(err)
	}
	if kind != "number" {
		t.Errorf("the authorization.approved callback's fxRate is a %s, want a number", kind)
	}
}
