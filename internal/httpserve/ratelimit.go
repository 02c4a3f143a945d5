package httpserve

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/paygate/gateway/internal/httplimits"
)

// Per-merchant rate limiting of /shop (docs/security.md, "Rate limits"): a
// token bucket per authenticated merchant (golang.org/x/time/rate's), so that one merchant's flood is
// answered 429 while the others' requests go on. The buckets live in this
// process: N gateway instances behind a load balancer give a merchant up to
// N times the budget. A limiter shared through the database or a cache is
// future work.

// rateBucketsMax bounds the buckets kept at once. Only authenticated
// merchants get one, so the bound is reached only by a gateway with that
// many merchants active within a couple of seconds; past it, the bucket
// idle the longest is dropped (its merchant starts again with a full one).
const rateBucketsMax = 100_000

// bucket is one merchant's token bucket, golang.org/x/time/rate's, and
// when it was last used (for eviction).
type bucket struct {
	lim  *rate.Limiter
	last time.Time
}

// RateLimiter holds the buckets. One mutex guards the map: the work under
// it is a map lookup and the limiter's arithmetic, never I/O, so a merchant
// that is being refused holds no one else up for longer than that.
type RateLimiter struct {
	rate  rate.Limit // tokens per second
	burst int        // the bucket's capacity
	now   func() time.Time
	// fullAfter is how long an untouched bucket takes to fill from empty:
	// past it, a bucket is the same as a new one and can be dropped.
	fullAfter  time.Duration
	bucketsMax int

	mu        sync.Mutex
	buckets   map[int64]*bucket
	lastSweep time.Time
}

// NewRateLimiter returns nil when the limit is off.
func NewRateLimiter(r httplimits.RateLimit, now func() time.Time) *RateLimiter {
	r = r.WithDefaults()
	if r.RPS < 0 {
		return nil
	}
	full := time.Duration(float64(r.Burst) / r.RPS * float64(time.Second))
	return &RateLimiter{
		rate: rate.Limit(r.RPS), burst: r.Burst, now: now,
		fullAfter: max(full, time.Second), bucketsMax: rateBucketsMax,
		buckets: map[int64]*bucket{}, lastSweep: now(),
	}
}

// Take spends one of merchant's tokens. When there is none, it reports how
// long until there is one, and spends nothing.
func (rl *RateLimiter) Take(merchant int64) (ok bool, wait time.Duration) {
	now := rl.now()
	rl.mu.Lock()
	defer rl.mu.Unlock()
	rl.sweep(now)
	b := rl.buckets[merchant]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(rl.rate, rl.burst)}
		rl.buckets[merchant] = b
	}
	if now.After(b.last) {
		b.last = now
	}
	// A reservation that would have to wait is handed back at once: the
	// request is refused, not queued. The limiter ignores a clock that went
	// backwards (it refills nothing).
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// sweep drops the buckets that have refilled, at most once per fullAfter
// (the cost is one pass over the map, spread over that many requests), and
// at once when the map is over its bound. Dropping a full bucket changes
// nothing: a new one starts full.
func (rl *RateLimiter) sweep(now time.Time) {
	if now.Sub(rl.lastSweep) < rl.fullAfter && len(rl.buckets) < rl.bucketsMax {
		return
	}
	rl.lastSweep = now
	for id, b := range rl.buckets {
		if now.Sub(b.last) >= rl.fullAfter {
			delete(rl.buckets, id)
		}
	}
	for len(rl.buckets) >= rl.bucketsMax {
		oldest, first := int64(0), true
		for id, b := range rl.buckets {
			if first || b.last.Before(rl.buckets[oldest].last) {
				oldest, first = id, false
			}
		}
		delete(rl.buckets, oldest)
	}
}

func (rl *RateLimiter) len() int {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return len(rl.buckets)
}

// RetryAfterSeconds is a wait as Retry-After says it: whole seconds,
// rounded up, at least 1.
func RetryAfterSeconds(wait time.Duration) int {
	s := int(math.Ceil(wait.Seconds()))
	if s < 1 {
		return 1
	}
	return s
}
