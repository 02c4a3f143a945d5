package api

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/postings"
)

// Keys of the values middleware leaves in the gin context.
const (
	loggerKey   = "api.logger"
	shopNoKey   = "api.shop_no"
	merchantKey = "api.merchant"
)

// requestIDBytesMax bounds an X-Request-Id taken from the client
// (docs/errors.md).
const requestIDBytesMax = 128

// withRequestID takes the client's X-Request-Id when it is a sane token, or
// makes one, echoes it in the answer and gives the request a logger that
// carries it, so that every line logged about the request names it.
func withRequestID(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		id := clientRequestID(c.Request.Header)
		if id == "" {
			id = newRequestID()
		}
		c.Header("X-Request-Id", id)
		c.Set(loggerKey, log.With("request_id", id))
		c.Next()
	}
}

// requestIDDigitRunMax is the longest run of digits a client's request id
// may hold: a longer one could be a card number (13 to 19 digits), which
// must never reach a log line.
const requestIDDigitRunMax = 12

// clientRequestID is the client's X-Request-Id when it is 1 to 128
// characters of A-Z a-z 0-9 _ . : -, sent once, with no run of more than 12
// digits; else "", and the gateway makes its own. An id is taken or replaced
// whole, never trimmed or escaped, so that what is echoed and logged is
// either exactly the client's or plainly the gateway's.
func clientRequestID(h http.Header) string {
	vs := h.Values("X-Request-Id")
	if len(vs) != 1 {
		return ""
	}
	id := vs[0]
	if id == "" || len(id) > requestIDBytesMax {
		return ""
	}
	digits := 0
	for i := 0; i < len(id); i++ {
		if !isRequestIDByte(id[i]) {
			return ""
		}
		if id[i] >= '0' && id[i] <= '9' {
			digits++
		} else {
			digits = 0
		}
		if digits > requestIDDigitRunMax {
			return ""
		}
	}
	return id
}

func isRequestIDByte(b byte) bool {
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') ||
		b == '_' || b == '.' || b == ':' || b == '-'
}

// newRequestID makes a request id: 15 random bytes in lower-case base32.
// Not hex: a long run of decimal digits would look like a card number to
// the log scanners that guard against PANs.
func newRequestID() string {
	b := make([]byte, 15)
	_, _ = rand.Read(b) // crypto/rand does not fail on Linux
	return "req_" + strings.ToLower(base32.StdEncoding.EncodeToString(b))
}

// logger is the request's logger.
func logger(c *gin.Context) *slog.Logger {
	if l, ok := c.Get(loggerKey); ok {
		return l.(*slog.Logger)
	}
	return slog.Default()
}

// accessLog writes one line per request and records its metrics. It logs
// the route template, never the URL, the headers or the body: those carry
// keys and card tokens.
func accessLog(now func() time.Time, m *metrics) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := now()
		c.Next()
		elapsed := now().Sub(start)
		route := routeLabel(c)
		status := c.Writer.Status()
		code, hasCode := c.Get(outcomeKey)
		attrs := []any{
			"method", c.Request.Method, "route", route, "status", status,
			"latency_ms", float64(elapsed.Microseconds()) / 1000,
		}
		if hasCode {
			attrs = append(attrs, "code", code)
		}
		if shop := c.GetString(shopNoKey); shop != "" {
			attrs = append(attrs, "shop_no", shop)
		}
		level := slog.LevelInfo
		if status >= 500 {
			level = slog.LevelError
		}
		logger(c).Log(c.Request.Context(), level, "request", attrs...)
		m.observe(route, c.Request.Method, status, code, elapsed)
		if reason, ok := c.Get(unavailableKey); ok {
			m.unavailable(reason.(string))
		}
	}
}

// routeLabel is the matched route template, or "unmatched": a bounded set,
// for logs and metric labels.
func routeLabel(c *gin.Context) string {
	if r := c.FullPath(); r != "" {
		return r
	}
	return "unmatched"
}

// recoverPanic turns a panic into a 500 envelope, logged once with its
// stack. http.ErrAbortHandler keeps its meaning (abort the connection).
func recoverPanic() gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			logger(c).Error("panic", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			writeEnvelopeFailure(c, http.StatusInternalServerError, messageInternal)
		}()
		c.Next()
	}
}

// writeEnvelopeFailure answers an HTTP failure that is not a domain error.
func writeEnvelopeFailure(c *gin.Context, status int, message string) {
	setOutcome(c, status)
	writeEnvelope(c, status, envelope{Code: status, Message: message})
}

// withTimeout gives the request a deadline (spec section 8). Everything the
// handlers call takes the context, so a request that reaches it stops and is
// answered 503 (docs/api.md).
func withTimeout(d time.Duration) gin.HandlerFunc {
	return func(c *gin.Context) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), d)
		defer cancel()
		c.Request = c.Request.WithContext(ctx)
		c.Next()
	}
}

// limitBody bounds the request body; reading past the limit fails with
// *http.MaxBytesError, which readBody answers 413.
func limitBody(n int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > n {
			writeError(c, errBodyTooLarge(n))
			return
		}
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, n)
		c.Next()
	}
}

func errBodyTooLarge(n int64) error {
	return &postings.Error{Code: postings.EINVALID, Reason: reasonBodyTooLarge, Field: "body",
		Message: fmt.Sprintf("is larger than %d bytes", n)}
}

// handleNoRoute and handleNoMethod answer in the envelope, like every other
// answer.
func handleNoRoute() gin.HandlerFunc {
	return func(c *gin.Context) {
		writeError(c, &postings.Error{Code: postings.ENOTFOUND, Reason: reasonRoute, Message: "no such endpoint"})
	}
}

func handleNoMethod() gin.HandlerFunc {
	return func(c *gin.Context) {
		writeError(c, &postings.Error{Code: postings.EINVALID, Reason: reasonMethod,
			Message: "method " + c.Request.Method + " not allowed on this endpoint"})
	}
}
