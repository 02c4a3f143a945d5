package api

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/httplimits"
	"github.com/paygate/gateway/internal/merchant"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestRateLimiterBucket(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	rl := newRateLimiter(RateLimit{RPS: 10, Burst: 5}, clock.Now)
	for i := 0; i < 5; i++ {
		if ok, _ := rl.take(1); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	ok, wait := rl.take(1)
	if ok || wait <= 0 || wait > 100*time.Millisecond {
		t.Fatalf("past the burst: ok %v wait %v, want a refusal for at most 100ms", ok, wait)
	}
	// Another merchant has its own bucket.
	if ok, _ := rl.take(2); !ok {
		t.Fatal("merchant 2 refused because merchant 1 is out of tokens")
	}
	// 10 tokens a second: 250ms brings two and a half.
	clock.add(250 * time.Millisecond)
	for i := 0; i < 2; i++ {
		if ok, _ := rl.take(1); !ok {
			t.Fatalf("refilled token %d refused", i+1)
		}
	}
	if ok, wait := rl.take(1); ok || wait != 50*time.Millisecond {
		t.Fatalf("half a token left: ok %v wait %v, want a refusal for 50ms", ok, wait)
	}
	// A long pause refills to the burst, not beyond.
	clock.add(time.Hour)
	for i := 0; i < 5; i++ {
		if ok, _ := rl.take(1); !ok {
			t.Fatalf("after a pause, request %d refused", i+1)
		}
	}
	if ok, _ := rl.take(1); ok {
		t.Fatal("the bucket grew past its burst")
	}
	// A clock that steps back refills nothing and does not panic.
	clock.add(-time.Minute)
	if ok, _ := rl.take(1); ok {
		t.Fatal("a clock stepping back refilled the bucket")
	}
}

func TestRateLimiterOff(t *testing.T) {
	t.Parallel()
	if rl := newRateLimiter(RateLimit{RPS: -1}, time.Now); rl != nil {
		t.Fatal("a negative RPS must turn the limit off")
	}
	rl := newRateLimiter(RateLimit{}, time.Now)
	if float64(rl.rate) != httplimits.RateLimitRPSDefault || rl.burst != httplimits.RateLimitBurstDefault {
		t.Fatalf("defaults: %v/s burst %v", rl.rate, rl.burst)
	}
}

// Buckets idle long enough to have refilled are dropped, so memory follows
// the merchants active in the last few seconds; a hard bound caps the rest.
func TestRateLimiterEvictsIdleBuckets(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	rl := newRateLimiter(RateLimit{RPS: 100, Burst: 200}, clock.Now) // full after 2s
	for id := int64(1); id <= 1000; id++ {
		rl.take(id)
	}
	if n := rl.len(); n != 1000 {
		t.Fatalf("%d buckets, want 1000", n)
	}
	clock.add(time.Second)
	rl.take(1) // still busy
	clock.add(1500 * time.Millisecond)
	rl.take(2000)
	if n := rl.len(); n != 2 {
		t.Fatalf("%d buckets after the idle ones refilled, want 2 (merchants 1 and 2000)", n)
	}

	rl.bucketsMax = 10
	for id := int64(1); id <= 50; id++ {
		clock.add(time.Millisecond)
		rl.take(id)
	}
	if n := rl.len(); n > 10 {
		t.Fatalf("%d buckets, over the bound of 10", n)
	}
	// The busiest (most recent) merchant kept its bucket: its spent token
	// is still spent.
	rl.mu.Lock()
	b := rl.buckets[50]
	rl.mu.Unlock()
	if b == nil || b.lim.TokensAt(clock.Now()) != 199 {
		t.Fatalf("the newest bucket was evicted or reset: %+v", b)
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		give time.Duration
		want int
	}{{0, 1}, {time.Millisecond, 1}, {time.Second, 1}, {1001 * time.Millisecond, 2}, {2500 * time.Millisecond, 3}} {
		if got := retryAfterSeconds(tt.give); got != tt.want {
			t.Errorf("retryAfterSeconds(%v) = %d, want %d", tt.give, got, tt.want)
		}
	}
}

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
