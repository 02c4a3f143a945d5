package cards_test

import (
	"context"
	"math/big"
	"strconv"
	"testing"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// A card transfer across currencies records the facts of its conversion
// in its hashed metadata, as a foreign CARD_AUTH does (issue 30 point 2,
// docs/audit.md "Economic facts"): the rate version and its time, the mid
// rate, the spread, the rounding and both amounts, and for a withdrawal
// that the card's amount was derived from the funding's (fx_inverse).
// Between a currency of 0 decimals and one of 3, both ways, the facts are
// the amounts moved, those amounts are the rule's worked out in exact
// rationals, the facts re-derive, and audit verify finds nothing.
func TestTransferAcrossCurrenciesRecordsFacts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "JPY", "KWD")
	deposit(t, l, m.ID, "JPY", 1_000_000)
	deposit(t, l, m.ID, "KWD", 1_000_000)
	type pair struct{ base, quote, mid string }
	versions := map[pair]int64{}
	for _, p := range []pair{{"JPY", "KWD", "0.00204"}, {"KWD", "JPY", "489.5"}} {
		r, err := l.FX.Set(ctx, p.base, p.quote, p.mid, 50)
		if err != nil {
			t.Fatal(err)
		}
		versions[p] = r.Version
	}
	card := map[string]string{} // currency → card number
	for i, cur := range []string{"JPY", "KWD"} {
		bin := "4532970" + strconv.Itoa(i) // a BIN of the card's currency: the seeded ones are USD and EUR
		if err := l.Cards.UpsertBIN(ctx, cards.BIN{Bin: bin, Currency: cur, Network: "VISA", Enabled: true}); err != nil {
			t.Fatal(err)
		}
		c, err := l.Cards.CreateCard(ctx, m.ID, cards.CreateCardInput{Bin: bin, Currency: cur}, nil)
		if err != nil {
			t.Fatal(err)
		}
		card[cur] = c.CardNo
	}
	for _, tt := range []struct {
		name             string
		fund, card       string
		dir              string
		amount           int64
		rate             pair  // the rate version used
		wantFrom, wantTo int64 // the fact's fx_from_amount and fx_amount
	}{
		// 12,345 JPY × 0.00204 × 0.995 = 25.0578… KWD: 25,057 fils, down.
		{name: "JPY funding to a KWD card", fund: "JPY", card: "KWD", dir: cards.DirectionIn, amount: 12345,
			rate: pair{"JPY", "KWD", "0.00204"}, wantFrom: 12345, wantTo: 25057},
		// 20.000 KWD × 489.5 × 0.995 = 9,741.05 JPY: ¥9,741, down.
		{name: "KWD funding to a JPY card", fund: "KWD", card: "JPY", dir: cards.DirectionIn, amount: 20000,
			rate: pair{"KWD", "JPY", "489.5"}, wantFrom: 20000, wantTo: 9741},
		// The merchant receives ¥1,234: the KWD card pays 1234 / (489.5 ×
		// 0.995) = 2.5336… KWD: 2,534 fils, up.
		{name: "a KWD card to JPY funding", fund: "JPY", card: "KWD", dir: cards.DirectionOut, amount: 1234,
			rate: pair{"KWD", "JPY", "489.5"}, wantFrom: 2534, wantTo: 1234},
		// The merchant receives 1.001 KWD: the JPY card pays 1.001 /
		// (0.00204 × 0.995) = 493.1… JPY: ¥494, up.
		{name: "a JPY card to KWD funding", fund: "KWD", card: "JPY", dir: cards.DirectionOut, amount: 1001,
			rate: pair{"JPY", "KWD", "0.00204"}, wantFrom: 494, wantTo: 1001},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := l.Cards.Transfer(ctx, m.ID, cards.TransferInput{CardNo: card[tt.card], Amount: tt.amount, Currency: tt.fund, Direction: tt.dir}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := ruleAmount(t, tt.dir, tt.amount, tt.fund, tt.card, tt.rate.mid); res.CardAmount != want {
				t.Fatalf("the card moved %d, the rule gives %d", res.CardAmount, want)
			}
			recs, err := audit.New(l.Ledger).EntriesByRef(ctx, m.ID, postings.Refs{TxID: res.TxID})
			if err != nil || len(recs) != 1 {
				t.Fatalf("entries %+v, %v", recs, err)
			}
			e := &recs[0].Entry
			fx, ok, err := e.FX()
			if !ok || err != nil {
				t.Fatalf("the transfer records no conversion (%v): %v", err, e.Metadata)
			}
			wantInverse := tt.dir == cards.DirectionOut
			if fx.From.Code != tt.rate.base || fx.To.Code != tt.rate.quote || fx.FromAmount != tt.wantFrom || fx.Amount != tt.wantTo ||
				fx.RateVersion != versions[tt.rate] || fx.SpreadBps != 50 || fx.Mid.String() != tt.rate.mid || fx.Inverse != wantInverse {
				t.Fatalf("facts %+v, want %s/%s %d → %d at version %d, inverse %v", fx, tt.rate.base, tt.rate.quote,
					tt.wantFrom, tt.wantTo, versions[tt.rate], wantInverse)
			}
			if b := e.CheckFacts(); len(b) != 0 {
				t.Fatalf("the facts do not re-derive: %v", b)
			}
			if e.Metadata["fx_rate"] != res.FXRate {
				t.Fatalf("fx_rate %q, the answer's %q", e.Metadata["fx_rate"], res.FXRate)
			}
		})
	}
	mustVerify(t, l)
}

// ruleAmount is the card's side of a transfer by docs/cards.md's rule, in
// exact rationals: IN converts the amount at the client rate, down; OUT
// divides it by the client rate, up.
func ruleAmount(t *testing.T, dir string, amount int64, fund, card, mid string) int64 {
	t.Helper()
	rate, ok := new(big.Rat).SetString(mid)
	if !ok {
		t.Fatalf("rate %q", mid)
	}
	rate.Mul(rate, big.NewRat(9950, 10000)) // 50 bps off (exact at these rates' digits)
	exp := map[string]int64{"JPY": 0, "KWD": 3}
	scale := func(e int64) *big.Rat {
		return new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(e), nil))
	}
	units := new(big.Rat).Quo(big.NewRat(amount, 1), scale(exp[fund])) // the funding side in units
	if dir == cards.DirectionIn {
		units.Mul(units, rate)
	} else {
		units.Quo(units, rate)
	}
	minor := units.Mul(units, scale(exp[card]))
	q, r := new(big.Int).QuoRem(minor.Num(), minor.Denom(), new(big.Int))
	if dir == cards.DirectionOut && r.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	v, err := strconv.ParseInt(q.String(), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
