package cards_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/ledger"
)

// The console's card search (moved from the console, issue 28 point 2):
// by whole number or last four digits, by status, newest first, bounded,
// and never another merchant's card.
func TestSearchFindsTheMerchantsCardsOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	at := time.Date(2031, 6, 1, 9, 0, 0, 0, time.UTC)
	l := newLedger(t, ledger.Config{Now: func() time.Time { at = at.Add(time.Minute); return at }})
	m := newMerchant(t, l, "USD")
	other := newMerchant(t, l, "USD")
	deposit(t, l, m.ID, "USD", 1_000_00)
	deposit(t, l, other.ID, "USD", 1_000_00)
	var mine []*cards.Card // in the order issued
	for i := 0; i < 3; i++ {
		c, err := l.Cards.CreateCard(ctx, m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		mine = append(mine, c)
	}
	if _, err := l.Cards.FreezeCard(ctx, m.ID, mine[1].CardNo, "test", nil); err != nil {
		t.Fatal(err)
	}
	theirs, err := l.Cards.CreateCard(ctx, other.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, q, status string
		limit           int
		want            []string
	}{
		{"all, newest first", "", "", 50, []string{mine[2].CardNo, mine[1].CardNo, mine[0].CardNo}},
		{"bounded", "", "", 2, []string{mine[2].CardNo, mine[1].CardNo}},
		{"by number", mine[0].CardNo, "", 50, []string{mine[0].CardNo}},
		{"by status", "", cards.CardFrozen, 50, []string{mine[1].CardNo}},
		{"number and other status", mine[0].CardNo, cards.CardFrozen, 50, nil},
		{"another merchant's number", theirs.CardNo, "", 50, nil},
	}
	for _, c := range cases {
		got, err := l.Cards.Search(ctx, m.ID, c.q, c.status, c.limit)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: Search = %v, want %v", c.name, got, c.want)
		}
	}
	// By last four digits: every card of the merchant with them, none of
	// the other's.
	last4 := mine[0].Last4
	got, err := l.Cards.Search(ctx, m.ID, last4, "", 50)
	if err != nil || !slices.Contains(got, mine[0].CardNo) || slices.Contains(got, theirs.CardNo) {
		t.Errorf("Search(last4 %s) = %v, %v; want %s among them and not %s", last4, got, err, mine[0].CardNo, theirs.CardNo)
	}
}

func TestBINOverridesAreTheMerchantsExplicitAccess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "USD", "EUR")
	other := newMerchant(t, l, "USD")
	yes, no := true, false
	for _, s := range []struct {
		m       int64
		bin     string
		cur     string
		allowed *bool
	}{{m.ID, "453202", "EUR", &no}, {m.ID, "453201", "USD", &yes}, {other.ID, "453201", "USD", &no}} {
		if err := l.Cards.SetBINAccess(ctx, s.m, s.bin, s.cur, s.allowed); err != nil {
			t.Fatal(err)
		}
	}
	got, err := l.Cards.BINOverrides(ctx, m.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []cards.BINAccess{{BIN: "453201", Currency: "USD", Allowed: true}, {BIN: "453202", Currency: "EUR", Allowed: false}}
	if !slices.Equal(got, want) {
		t.Errorf("BINOverrides = %+v, want %+v", got, want)
	}
	if got, err := l.Cards.BINOverrides(ctx, m.ID, 1); err != nil || len(got) != 1 {
		t.Errorf("BINOverrides(limit 1) = %+v, %v; want one", got, err)
	}
	if err := l.Cards.SetBINAccess(ctx, other.ID, "453201", "USD", nil); err != nil {
		t.Fatal(err)
	}
	if got, err := l.Cards.BINOverrides(ctx, other.ID, 10); err != nil || len(got) != 0 {
		t.Errorf("BINOverrides after removing the override = %+v, %v; want none", got, err)
	}
}
