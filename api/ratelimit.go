package api

import (
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/internal/httplimits"
	"github.com/paygate/gateway/internal/httpserve"
	"github.com/paygate/gateway/postings"
)

// Per-merchant rate limiting of /shop (docs/security.md, "Rate limits"):
// the buckets are httpserve.RateLimiter's; what is /shop's is whose bucket
// a request spends (the authenticated merchant's) and the 429's envelope.

// reasonRateLimited is the reason of the 429 (api/envelope.go).
const reasonRateLimited = "rate_limited"

// RateLimit sizes each merchant's token bucket on /shop. It is declared
// with the other bounds of the surface in internal/httplimits, which the
// configuration reads without linking the HTTP server.
type RateLimit = httplimits.RateLimit

// limitRate is the middleware of /shop after authentication: a merchant
// out of tokens is answered 429 in the envelope with Retry-After (whole
// seconds, at least 1), before its body is read. A request that failed
// authentication never gets here, so it costs no merchant anything.
func limitRate(rl *httpserve.RateLimiter) gin.HandlerFunc {
	if rl == nil {
		return func(c *gin.Context) { c.Next() }
	}
	return func(c *gin.Context) {
		ok, wait := rl.Take(merchantOf(c).ID)
		if ok {
			c.Next()
			return
		}
		c.Header("Retry-After", strconv.Itoa(httpserve.RetryAfterSeconds(wait)))
		writeError(c, &postings.Error{Code: postings.ELIMIT, Reason: reasonRateLimited,
			Message: "rate limit exceeded; retry after the number of seconds in Retry-After"})
	}
}
