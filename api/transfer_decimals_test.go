package api

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/merchant"
)

// TestTransferBetweenZeroAndThreeDecimals: card transfers between JPY (no
// decimals) and KWD or BHD (three), both ways, over the API, each checked
// to the minor unit against the rule of docs/cards.md ("Cross-currency
// transfers") worked out here independently in exact rationals: executed
// = mid × (1 − spread/10⁴); IN, the card receives amount × executed
// rounded down; OUT, the merchant receives exactly amount and the card
// pays amount ÷ executed rounded up. The cases include amounts whose
// conversion is exact (neither direction may then move by a unit), the
// smallest amounts (one yen; one fils), and one that converts to less than
// one minor unit (refused, naming amount, nothing moved). Every balance is
// checked after every transfer against a running model.
func TestTransferBetweenZeroAndThreeDecimals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTestServer(t, serverOptions{})
	sh := s.newShop(merchant.Spec{Currencies: []string{"JPY", "KWD", "BHD"}})
	exp := map[string]int{"JPY": 0, "KWD": 3, "BHD": 3}
	funding := map[string]int64{"JPY": 10_000_000, "KWD": 1_000_000, "BHD": 1_000_000} // ¥10,000,000; 1000.000 KWD, BHD
	for cur, minor := range funding {
		s.deposit(sh, cur, minor)
	}
	rates := map[string]struct {
		mid    string
		spread int64
	}{
		"JPY/KWD": {"0.00205", 50}, "KWD/JPY": {"490", 50},
		"JPY/BHD": {"0.0025", 30}, "BHD/JPY": {"400.5", 30},
	}
	for pair, r := range rates {
		base, quote, _ := strings.Cut(pair, "/")
		if _, err := s.l.FX.Set(ctx, base, quote, r.mid, r.spread); err != nil {
			t.Fatal(err)
		}
	}
	cardOf := map[string]string{}
	for i, cur := range []string{"JPY", "KWD", "BHD"} {
		bin := fmt.Sprintf("45329%d", 7+i)
		if err := s.l.Cards.UpsertBIN(ctx, cards.BIN{Bin: bin, Currency: cur, Network: "VISA", Enabled: true}); err != nil {
			t.Fatal(err)
		}
		cardOf[cur] = s.createCard(sh, fmt.Sprintf(`{"bin":%q,"currency":%q,"amount":0}`, bin, cur)).CardNo
	}
	card := map[string]int64{} // card balances by currency, minor units

	for _, tc := range []struct {
		cardCur, dir, cur, amount string
		want                      int64 // the card side in minor units, worked out by hand (checked below too)
	}{
		{"KWD", "IN", "JPY", "10000", 20_397},   // 20.3975 KWD, down
		{"KWD", "IN", "JPY", "100000", 203_975}, // exact
		{"KWD", "IN", "JPY", "1", 2},            // 0.00203975, down to 0.002
		{"KWD", "OUT", "JPY", "1000", 2_052},    // 2.05107… KWD, up
		{"KWD", "OUT", "JPY", "48755", 100_000}, // exactly 100.000 KWD
		{"KWD", "OUT", "JPY", "1", 3},           // 0.00205… KWD, up to 0.003
		{"JPY", "IN", "KWD", "1.234", 601},      // ¥601.6367, down
		{"JPY", "IN", "KWD", "20.000", 9_751},   // exact
		{"JPY", "OUT", "KWD", "0.500", 246},     // ¥245.128…, up
		{"JPY", "OUT", "KWD", "0.001", 1},       // ¥0.49…, up to ¥1
		{"BHD", "IN", "JPY", "12345", 30_769},   // 30.76991… BHD, down
		{"BHD", "OUT", "JPY", "777", 1_946},     // 1.94591… BHD, up
		{"JPY", "IN", "BHD", "0.999", 398},      // ¥398.899…, down
		{"JPY", "OUT", "BHD", "0.100", 41},      // ¥40.12…, up
	} {
		name := fmt.Sprintf("%s card %s %s %s", tc.cardCur, tc.dir, tc.amount, tc.cur)
		pair := tc.cur + "/" + tc.cardCur
		if tc.dir == "OUT" {
			pair = tc.cardCur + "/" + tc.cur
		}
		executed := spreadRate(t, rates[pair].mid, rates[pair].spread)
		amountMinor := minorOf(t, tc.amount, exp[tc.cur])
		want := convertExpected(amountMinor, exp[tc.cur], exp[tc.cardCur], executed, tc.dir == "IN")
		if want != tc.want {
			t.Fatalf("%s: the rule gives %d, the table says %d", name, want, tc.want)
		}

		var out transferOut
		s.request(&sh, "POST", "/shop/card/transfer", fmt.Sprintf(`{"cardNo":%q,"amount":%q,"currency":%q,"direction":%q}`,
			cardOf[tc.cardCur], tc.amount, tc.cur, tc.dir)).must(t, 200, 200).into(t, &out)
		if tc.dir == "IN" {
			funding[tc.cur] -= amountMinor
			card[tc.cardCur] += want
		} else {
			funding[tc.cur] += amountMinor
			card[tc.cardCur] -= want
		}
		wantOut := map[string]string{
			"amount": formatMinor(amountMinor, exp[tc.cur]), "cardAmount": formatMinor(want, exp[tc.cardCur]),
			"cardBalance": formatMinor(card[tc.cardCur], exp[tc.cardCur]), "fundingBalance": formatMinor(funding[tc.cur], exp[tc.cur]),
			"currency": tc.cur, "cardCurrency": tc.cardCur,
		}
		got := map[string]string{
			"amount": out.Amount.String(), "cardAmount": out.CardAmount.String(), "cardBalance": out.CardBalance.String(),
			"fundingBalance": out.FundingBalance.String(), "currency": out.Currency, "cardCurrency": out.CardCurrency,
		}
		for k, w := range wantOut {
			if got[k] != w {
				t.Errorf("%s: %s = %s, want %s", name, k, got[k], w)
			}
		}
		if out.FXRate == nil {
			t.Errorf("%s: no fxRate", name)
		} else if r, ok := new(big.Rat).SetString(out.FXRate.String()); !ok || r.Cmp(executed) != 0 {
			t.Errorf("%s: fxRate %s, want %s", name, out.FXRate, executed.RatString())
		}
		s.checkBalances(t, sh, name, cardOf, card, funding, exp)
	}

	// 0.001 KWD into the yen card is ¥0.48755: less than one yen, refused,
	// and nothing moves.
	a := s.request(&sh, "POST", "/shop/card/transfer", fmt.Sprintf(`{"cardNo":%q,"amount":"0.001","currency":"KWD","direction":"IN"}`,
		cardOf["JPY"])).must(t, 400, 400)
	if !strings.Contains(a.Message, "amount") {
		t.Errorf("a transfer worth less than one yen: %q, want the amount named", a.Message)
	}
	s.checkBalances(t, sh, "after the refused transfer", cardOf, card, funding, exp)
}

// checkBalances compares every card and funding balance with the model.
func (s *testServer) checkBalances(t *testing.T, sh shop, when string, cardOf map[string]string, card, funding map[string]int64, exp map[string]int) {
	t.Helper()
	for cur, no := range cardOf {
		if got, want := s.cardInfo(sh, no).Balance.String(), formatMinor(card[cur], exp[cur]); got != want {
			t.Errorf("%s: the %s card holds %s, want %s", when, cur, got, want)
		}
	}
	for cur, minor := range funding {
		if got, want := s.fundingBalance(sh, cur), formatMinor(minor, exp[cur]); got != want {
			t.Errorf("%s: %s funding is %s, want %s", when, cur, got, want)
		}
	}
}

// spreadRate is mid × (1 − bps/10⁴), exactly.
func spreadRate(t *testing.T, mid string, bps int64) *big.Rat {
	t.Helper()
	m, ok := new(big.Rat).SetString(mid)
	if !ok {
		t.Fatalf("rate %q", mid)
	}
	return m.Mul(m, big.NewRat(10_000-bps, 10_000))
}

// minorOf reads a decimal amount into minor units, exactly.
func minorOf(t *testing.T, amount string, exp int) int64 {
	t.Helper()
	r, ok := new(big.Rat).SetString(amount)
	if !ok {
		t.Fatalf("amount %q", amount)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(exp)), nil)))
	if !r.IsInt() {
		t.Fatalf("amount %q has more than %d decimals", amount, exp)
	}
	return r.Num().Int64()
}

// convertExpected is the card side of a transfer of amount minor units
// (exponent fromExp) into a currency of exponent toExp: × rate, down (IN),
// or ÷ rate, up (OUT).
func convertExpected(amount int64, fromExp, toExp int, rate *big.Rat, in bool) int64 {
	v := new(big.Rat).SetFrac(big.NewInt(amount), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(fromExp)), nil))
	if in {
		v.Mul(v, rate)
	} else {
		v.Quo(v, rate)
	}
	v.Mul(v, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(toExp)), nil)))
	q, r := new(big.Int).QuoRem(v.Num(), v.Denom(), new(big.Int)) // both positive: QuoRem floors
	if !in && r.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.Int64()
}

// formatMinor writes minor units with exp decimals, as the API does.
func formatMinor(minor int64, exp int) string {
	if exp == 0 {
		return fmt.Sprint(minor)
	}
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	p := int64(1)
	for i := 0; i < exp; i++ {
		p *= 10
	}
	return fmt.Sprintf("%s%d.%0*d", sign, minor/p, exp, minor%p)
}
