package merchant_test

import (
	"context"
	"testing"

	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// The reads other packages make of the merchants instead of joining their
// table: the operator's list a page at a time, and the batch reads by id
// (each id once, an unknown id left out, an empty batch no read at all).
func TestReadsForOtherPackages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := gatewaytest.New(t, nil, gatewaytest.Options{Ledger: ledger.Config{}})
	var made []*merchant.Merchant
	for _, spec := range []merchant.Spec{
		{Name: "One", Currencies: []string{"USD"}},
		{Name: "Two", Currencies: []string{"EUR"}, Test: true},
		{Name: "Three", Currencies: []string{"USD", "EUR"}},
	} {
		m, _, err := g.Merchants.CreateMerchant(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, m)
	}
	if err := g.Merchants.SetCallbackURL(ctx, made[2].ID, "https://example.com/hook"); err != nil {
		t.Fatal(err)
	}

	first, err := g.Merchants.List(ctx, 0, 2)
	if err != nil || len(first) != 2 || first[0].ID != made[0].ID || first[1].ID != made[1].ID {
		t.Fatalf("List(0, 2) = %+v, %v; want the first two", first, err)
	}
	rest, err := g.Merchants.List(ctx, first[1].ID, 2)
	if err != nil || len(rest) != 1 || rest[0].ShopNo != made[2].ShopNo || rest[0].KYBTier == "" {
		t.Fatalf("List(after the second) = %+v, %v; want the third, whole", rest, err)
	}

	unknown := made[2].ID + 1000
	briefs, err := merchant.Briefs(ctx, g.DB(), []int64{made[1].ID, made[2].ID, made[1].ID, unknown})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		m        *merchant.Merchant
		test     bool
		callback string
	}{{made[1], true, ""}, {made[2], false, "https://example.com/hook"}} {
		b := briefs[tc.m.ID]
		if b.ShopNo != tc.m.ShopNo || b.Status != merchant.Active || b.Test != tc.test || b.CallbackURL != tc.callback {
			t.Errorf("Briefs[%d] = %+v, want shop %s, ACTIVE, test %v, callback %q", tc.m.ID, b, tc.m.ShopNo, tc.test, tc.callback)
		}
	}
	if _, ok := briefs[unknown]; ok || len(briefs) != 2 {
		t.Errorf("Briefs = %+v, want the two merchants only", briefs)
	}
	if _, err := merchant.Brief1(ctx, g.DB(), unknown); postings.ErrorCode(err) != postings.ENOTFOUND {
		t.Errorf("Brief1(unknown) = %v, want ENOTFOUND", err)
	}
	if none, err := merchant.Briefs(ctx, g.DB(), nil); err != nil || len(none) != 0 {
		t.Errorf("Briefs(nil) = %v, %v", none, err)
	}

	keys, err := merchant.SigningKeys(ctx, g.DB(), []int64{made[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	k := keys[made[0].ID]
	if _, err := g.Sealer().OpenSigningKey(k.Sealed, k.ShopNo); err != nil || k.ShopNo != made[0].ShopNo || k.PrevUntil != nil {
		t.Errorf("SigningKeys = %+v: the key does not open under its shop (%v)", k, err)
	}

	type row struct {
		merchant int64
		shop     string
	}
	rows := []row{{merchant: made[2].ID}, {merchant: made[0].ID}, {merchant: unknown}}
	err = merchant.NameShops(ctx, g.DB(), rows, func(r *row) int64 { return r.merchant }, func(r *row, s string) { r.shop = s })
	if err != nil || rows[0].shop != made[2].ShopNo || rows[1].shop != made[0].ShopNo || rows[2].shop != "" {
		t.Errorf("NameShops = %+v, %v", rows, err)
	}
}
