package merchant_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// An unknown shop and a wrong key must cost the same: not by timing them
// (two shared cores make that a coin toss), but by proving that both take
// the same steps — the cache compared in constant time, one query returning
// one row, one constant-time comparison of the key hash, the row decoded —
// whatever the cache holds.
func TestAuthenticateFailuresTakeTheSameSteps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	l := newMerchants(t, ledger.Config{Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
	_, creds, err := l.CreateMerchant(ctx, merchant.Spec{Name: "Shop", Currencies: []string{"USD"}})
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	merchant.SetAuthTrace(l, func(s string) { steps = append(steps, s) })
	trace := func(shopNo, key string) ([]string, error) {
		steps = nil
		_, err := l.Authenticate(ctx, shopNo, key)
		return slices.Clone(steps), err
	}
	want := []string{"cache_compare", "query", "compare", "decode"}

	// The cache holds the shop: a success puts it there.
	if got, err := trace(creds.ShopNo, creds.PublicKey); err != nil || !slices.Equal(got, want) {
		t.Fatalf("first success: steps %v, error %v", got, err)
	}
	if got, err := trace(creds.ShopNo, creds.PublicKey); err != nil || !slices.Equal(got, want[:1]) {
		t.Fatalf("cached success: steps %v, error %v (want the cache hit alone)", got, err)
	}
	failures := []struct{ name, shopNo, key string }{
		{"unknown shop", "SH0000000000", creds.PublicKey},
		{"unknown shop whose key is the dummy's preimage", "SH0000000001", "gateway: no such shop"},
		{"wrong key, shop cached", creds.ShopNo, creds.PublicKey + "x"},
		{"private key as the public key, shop cached", creds.ShopNo, creds.PrivateKey},
		{"empty key", creds.ShopNo, ""},
	}
	check := func(phase string) {
		for _, f := range failures {
			got, err := trace(f.shopNo, f.key)
			if postings.ErrorCode(err) != postings.EUNAUTHENTICATED {
				t.Fatalf("%s, %s: error %v, want unauthenticated", phase, f.name, err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s, %s: steps %v, want %v", phase, f.name, got, want)
			}
		}
	}
	check("cache warm")
	// Past the cache's time to live the shop is no longer cached: the same.
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	check("cache cold")
}
