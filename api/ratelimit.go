package api

import (
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/time/rate"

	"github.com/paygate/gateway/internal/httplimits"
	"github.com/paygate/gateway/postings"
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

// reasonRateLimited is the reason of the 429 (api/envelope.go).
const reasonRateLimited = "rate_limited"

// RateLimit sizes each merchant's token bucket on /shop. It is declared
// with the other bounds of the surface in internal/httplimits, which the
// configuration reads without linking the HTTP server.
type RateLimit = httplimits.RateLimit

// bucket is one merchant's token bucket, golang.org/x/time/rate's, and
// when it was last used (for eviction).
type bucket struct {
	lim  *rate.Limiter
	last time.Time
}

// rateLimiter holds the buckets. One mutex guards the map: the work under
// it is a map lookup and the limiter's arithmetic, never I/O, so a merchant
// that is being refused holds no one else up for longer than that.
type rateLimiter struct {
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

// newRateLimiter returns nil when the limit is off.
func newRateLimiter(r RateLimit, now func() time.Time) *rateLimiter {
	r = r.WithDefaults()
	if r.RPS < 0 {
		return nil
	}
	full := time.Duration(float64(r.Burst) / r.RPS * float64(time.Second))
	return &rateLimiter{
		rate: rate.Limit(r.RPS), burst: r.Burst, now: now,
		fullAfter: max(full, time.Second), bucketsMax: rateBucketsMax,
		buckets: map[int64]*bucket{}, lastSweep: now(),
	}
}

// take spends one of merchant's tokens. When there is none, it reports how
// long until there is one, and spends nothing.
func (rl *rateLimiter) take(merchant int64) (ok bool, wait time.Duration) {
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
func (rl *rateLimiter) sweep(now time.Time) {
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

func (rl *rateLimiter) len() int {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return len(rl.buckets)
}

// limitRate is the middleware of /shop after authentication: a merchant
// out of tokens is answered 429 in the envelope with Retry-After (whole
// seconds, at least 1), before its body is read. A request that failed
// authentication never gets here, so it costs no merchant anything.
func limitRate(rl *rateLimiter) gin.HandlerFunc {
	if rl == nil {
		return func(c *gin.Context) { c.Next() }
	}
	return func(c *gin.Context) {
		ok, wait := rl.take(merchantOf(c).ID)
		if ok {
			c.Next()
			return
		}
		c.Header("Retry-After", strconv.Itoa(retryAfterSeconds(wait)))
		writeError(c, &postings.Error{Code: postings.ELIMIT, Reason: reasonRateLimited,
			Message: "rate limit exceeded; retry after the number of seconds in Retry-After"})
	}
}

func retryAfterSeconds(wait time.Duration) int {
	s := int(math.Ceil(wait.Seconds()))
	if s < 1 {
		return 1
	}
	return s
}
