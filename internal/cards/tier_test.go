package cards_test

import (
	"context"
	"testing"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/ledger"
)

// The KYB tier is a column of merchants, whose SQL is internal/merchant's
// (merchant.KYBTier, merchant.SetKYBTier): setting it resets the limits in
// every currency of the merchant to the tier's, in one transaction, and the
// profile and the writer's batch (limits read with the head lock) see it.
func TestSetKYBTierResetsTheLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "USD", "EUR")
	for _, c := range []struct {
		tier    string
		usdCard int64 // the tier's card balance limit in USD (cards/limits.go)
	}{
		{cards.KYBTier2, 100_000_00},
		{cards.KYBTier3, 1_000_000_00},
		{cards.KYBTier1, 10_000_00},
	} {
		if err := l.Cards.SetKYBTier(ctx, m.ID, c.tier); err != nil {
			t.Fatalf("%s: %v", c.tier, err)
		}
		p, err := l.Cards.Profile(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if p.KYBTier != c.tier || len(p.Limits) != 2 {
			t.Fatalf("%s: profile tier %s, limits %+v", c.tier, p.KYBTier, p.Limits)
		}
		for _, lim := range p.Limits {
			if lim.Currency == "USD" && lim.CardBalanceMax != c.usdCard {
				t.Fatalf("%s: USD card balance limit %d, want %d", c.tier, lim.CardBalanceMax, c.usdCard)
			}
		}
	}
	if err := l.Cards.SetKYBTier(ctx, m.ID+1_000_000, cards.KYBTier2); err == nil {
		t.Fatal("the tier of a merchant that does not exist was set")
	}
	if err := l.Cards.SetKYBTier(ctx, m.ID, "TIER_9"); err == nil {
		t.Fatal("an unknown tier was set")
	}
}
