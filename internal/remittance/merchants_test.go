package remittance_test

import (
	"context"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
)

// The lists across merchants name each remittance's merchant through
// internal/merchant (merchant.Briefs), not by joining its table: a claim
// says which remittances are a test merchant's, and the stuck list gives
// each its shop number.
func TestListsAcrossMerchantsNameTheMerchant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	live := newMerchant(t, l, "EUR")
	test, _, err := l.CreateMerchant(ctx, merchant.Spec{Name: "Sandbox shop", Currencies: []string{"EUR"}, Test: true})
	if err != nil {
		t.Fatal(err)
	}
	made := map[string]*merchant.Merchant{}
	for _, m := range []*merchant.Merchant{live, test} {
		deposit(t, l, m.ID, "EUR", 5_000_00)
		r, err := l.Remit.CreateRemittance(ctx, m.ID, remitInput("DE89370400440532013000"), nil)
		if err != nil {
			t.Fatal(err)
		}
		made[r.TxID] = m
	}

	stuck, err := l.Remit.Stuck(ctx, time.Now().Add(time.Hour), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(stuck) != 2 {
		t.Fatalf("stuck = %+v, want the 2 remittances", stuck)
	}
	for _, s := range stuck {
		if m := made[s.TxID]; m == nil || s.ShopNo != m.ShopNo {
			t.Errorf("stuck %s has shop %q, want its merchant's", s.TxID, s.ShopNo)
		}
	}

	due, err := l.Remit.ClaimDueRemittances(ctx, 10, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 2 {
		t.Fatalf("claimed %+v, want the 2 remittances", due)
	}
	for _, d := range due {
		if want := made[d.TxID].Test; d.Test != want {
			t.Errorf("claimed %s: Test = %v, want %v", d.TxID, d.Test, want)
		}
	}
}
