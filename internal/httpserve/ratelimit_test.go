package httpserve

import (
	"sync"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/httplimits"
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
	rl := NewRateLimiter(httplimits.RateLimit{RPS: 10, Burst: 5}, clock.Now)
	for i := 0; i < 5; i++ {
		if ok, _ := rl.Take(1); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	ok, wait := rl.Take(1)
	if ok || wait <= 0 || wait > 100*time.Millisecond {
		t.Fatalf("past the burst: ok %v wait %v, want a refusal for at most 100ms", ok, wait)
	}
	// Another merchant has its own bucket.
	if ok, _ := rl.Take(2); !ok {
		t.Fatal("merchant 2 refused because merchant 1 is out of tokens")
	}
	// 10 tokens a second: 250ms brings two and a half.
	clock.add(250 * time.Millisecond)
	for i := 0; i < 2; i++ {
		if ok, _ := rl.Take(1); !ok {
			t.Fatalf("refilled token %d refused", i+1)
		}
	}
	if ok, wait := rl.Take(1); ok || wait != 50*time.Millisecond {
		t.Fatalf("half a token left: ok %v wait %v, want a refusal for 50ms", ok, wait)
	}
	// A long pause refills to the burst, not beyond.
	clock.add(time.Hour)
	for i := 0; i < 5; i++ {
		if ok, _ := rl.Take(1); !ok {
			t.Fatalf("after a pause, request %d refused", i+1)
		}
	}
	if ok, _ := rl.Take(1); ok {
		t.Fatal("the bucket grew past its burst")
	}
	// A clock that steps back refills nothing and does not panic.
	clock.add(-time.Minute)
	if ok, _ := rl.Take(1); ok {
		t.Fatal("a clock stepping back refilled the bucket")
	}
}

func TestRateLimiterOff(t *testing.T) {
	t.Parallel()
	if rl := NewRateLimiter(httplimits.RateLimit{RPS: -1}, time.Now); rl != nil {
		t.Fatal("a negative RPS must turn the limit off")
	}
	rl := NewRateLimiter(httplimits.RateLimit{}, time.Now)
	if float64(rl.rate) != httplimits.RateLimitRPSDefault || rl.burst != httplimits.RateLimitBurstDefault {
		t.Fatalf("defaults: %v/s burst %v", rl.rate, rl.burst)
	}
}

// Buckets idle long enough to have refilled are dropped, so memory follows
// the merchants active in the last few seconds; a hard bound caps the rest.
func TestRateLimiterEvictsIdleBuckets(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	rl := NewRateLimiter(httplimits.RateLimit{RPS: 100, Burst: 200}, clock.Now) // full after 2s
	for id := int64(1); id <= 1000; id++ {
		rl.Take(id)
	}
	if n := rl.len(); n != 1000 {
		t.Fatalf("%d buckets, want 1000", n)
	}
	clock.add(time.Second)
	rl.Take(1) // still busy
	clock.add(1500 * time.Millisecond)
	rl.Take(2000)
	if n := rl.len(); n != 2 {
		t.Fatalf("%d buckets after the idle ones refilled, want 2 (merchants 1 and 2000)", n)
	}

	rl.bucketsMax = 10
	for id := int64(1); id <= 50; id++ {
		clock.add(time.Millisecond)
		rl.Take(id)
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
		if got := RetryAfterSeconds(tt.give); got != tt.want {
			t.Errorf("RetryAfterSeconds(%v) = %d, want %d", tt.give, got, tt.want)
		}
	}
}
