package api

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/paygate/gateway/internal/merchant"
)

// Past its burst a merchant is answered 429 in the envelope with
// Retry-After, before its body is read; requests that fail authentication
// cost it nothing.
func TestRateLimit429(t *testing.T) {
	// Not parallel: it runs alone, before the parallel tests, so that it
	// tests the server and not the machine. The bucket refills one token
	// every 100 s: the requests below, which must all meet an empty bucket,
	// may take seconds each on a loaded machine (CI runs every package at
	// once), and a refill every 5 s let one through there.
	s := newTestServer(t, serverOptions{rateLimit: RateLimit{RPS: 0.01, Burst: 3}})
	sh := s.newShop(merchant.Spec{})
	// Someone who knows the shop number but not the key cannot spend the
	// merchant's budget.
	for i := 0; i < 10; i++ {
		s.request(nil, "GET", "/shop/account", "", "X-Shop-No", sh.creds.ShopNo, "X-Public-Key", "pk_wrong").must(t, 401, 401)
	}
	for i := 0; i < 3; i++ {
		s.request(&sh, "GET", "/shop/account", "").must(t, 200, 200)
	}
	a := s.request(&sh, "GET", "/shop/account", "").must(t, 429, 429)
	golden(t, "429_rate_limited", a.raw)
	if ra, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || ra < 1 || ra > 100 {
		t.Errorf("Retry-After %q, want 1 to 100 seconds at 0.01 requests/s", a.header.Get("Retry-After"))
	}
	// A POST is refused before its body and its Idempotency-Key are looked
	// at: a malformed body is a 429 too, and the key stays unused.
	s.request(&sh, "POST", "/shop/card/freeze", `{not json`, "Idempotency-Key", "k-429").must(t, 429, 429)
	var keys int
	if err := s.l.DB().NewRaw("select count(*) from idempotency_keys").Scan(context.Background(), &keys); err != nil {
		t.Fatal(err)
	}
	if keys != 0 {
		t.Errorf("%d idempotency keys stored by refused requests", keys)
	}
	// Health and metrics are not /shop and are never limited.
	for i := 0; i < 5; i++ {
		resp, err := s.client.Get(s.srv.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("/healthz %d", resp.StatusCode)
		}
	}
}

// One merchant flooding the gateway past its limit does not block another:
// while the first is answered 429 from several connections, every request
// of the second succeeds.
func TestRateLimitIsolatesMerchants(t *testing.T) {
	// Not parallel: it floods one merchant's token bucket; it runs alone, before the parallel tests,
	// so that it tests the server and not the machine.
	s := newTestServer(t, serverOptions{rateLimit: RateLimit{RPS: 1, Burst: 40}})
	noisy := s.newShop(merchant.Spec{})
	quiet := s.newShop(merchant.Spec{})
	const floodWorkers, floodEach, quietRequests = 8, 40, 35
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		refused int
		failed  []string
	)
	start := make(chan struct{})
	for w := 0; w < floodWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := 0; i < floodEach; i++ {
				a := s.request(&noisy, "GET", "/shop/card/bin/list", "")
				mu.Lock()
				switch a.status {
				case 429:
					refused++
				case 200:
				default:
					failed = append(failed, fmt.Sprintf("noisy: HTTP %d %s", a.status, a.raw))
				}
				mu.Unlock()
			}
		}()
	}
	close(start)
	for i := 0; i < quietRequests; i++ {
		s.request(&quiet, "GET", "/shop/card/bin/list", "").must(t, 200, 200)
	}
	wg.Wait()
	for _, f := range failed {
		t.Error(f)
	}
	// 320 requests against a burst of 40 at 1/s: most are refused.
	if refused < floodWorkers*floodEach/2 {
		t.Errorf("only %d of %d flood requests refused", refused, floodWorkers*floodEach)
	}
	// The quiet merchant still has the rest of its own burst.
	s.request(&quiet, "GET", "/shop/account", "").must(t, 200, 200)
}
