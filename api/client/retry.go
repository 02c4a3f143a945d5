package client

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy says when and how often a call is sent again. A request is
// retried only when that is safe: a GET, or a POST that carries its
// Idempotency-Key (or, on the internal API, its message id), so that the
// gateway answers a repeat with the first outcome instead of acting twice.
// It is retried only after a failure that may pass: no answer, HTTP 429 or
// 503 (and, with RetryInProgress, code 1009). A 4xx other than 429 and a
// business failure are final and never retried.
//
// The zero value gives the defaults. Disable retries with MaxAttempts 1.
type RetryPolicy struct {
	// MaxAttempts bounds the attempts, the first included. Default 4.
	MaxAttempts int
	// MaxElapsed, when positive, ends the retries once the next wait would
	// end after this long since the first attempt.
	MaxElapsed time.Duration
	// BaseDelay is the wait before the second attempt; each later wait
	// doubles, up to MaxDelay. The wait is jittered: a random duration
	// between half of it and all of it, so that clients that failed
	// together do not come back together. Defaults 200 ms and 5 s.
	BaseDelay, MaxDelay time.Duration
	// RetryAfterMax bounds the Retry-After the client waits for: an answer
	// asking for longer ends the retries (the error carries RetryAfter).
	// Default 60 s. A shorter computed wait is raised to Retry-After.
	RetryAfterMax time.Duration
	// RetryInProgress retries code 1009 (a request with the same key is
	// still running, on this gateway or another): off by default, since it
	// is an answer, but the retry with the same key is safe and returns the
	// first request's outcome.
	RetryInProgress bool
}

// NoRetry sends every request once.
var NoRetry = RetryPolicy{MaxAttempts: 1}

// Defaults of RetryPolicy.
const (
	RetryAttemptsDefault = 4
	RetryBaseDefault     = 200 * time.Millisecond
	RetryMaxDelayDefault = 5 * time.Second
	RetryAfterMaxDefault = time.Minute
)

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = RetryAttemptsDefault
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = RetryBaseDefault
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = RetryMaxDelayDefault
	}
	if p.MaxDelay < p.BaseDelay {
		p.MaxDelay = p.BaseDelay
	}
	if p.RetryAfterMax <= 0 {
		p.RetryAfterMax = RetryAfterMaxDefault
	}
	return p
}

// retryable: may this failure pass if the same request is sent again?
func (p RetryPolicy) retryable(e *Error) bool {
	if e.Status == http.StatusOK && e.Code == CodeInProgress {
		return p.RetryInProgress
	}
	return e.Temporary()
}

// backoff is the wait after attempt n (1 for the first), jittered into
// [d/2, d] where d = BaseDelay·2^(n-1) capped at MaxDelay.
func (p RetryPolicy) backoff(n int) time.Duration {
	d := p.MaxDelay
	if n-1 < 30 {
		if b := p.BaseDelay << (n - 1); b > 0 && b < d {
			d = b
		}
	}
	half := d / 2
	return half + rand.N(d-half+1) //nolint:gosec // G404: jitter, not a secret
}

// parseRetryAfter reads Retry-After: delay-seconds or an HTTP date (RFC
// 9110 section 10.2.3). 0 when absent or malformed.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 {
			return 0
		}
		if s > int64(24*time.Hour/time.Second) {
			s = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// sleepCtx waits d, or less when ctx ends first (then false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
