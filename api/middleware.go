package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/internal/httpserve"
	"github.com/paygate/gateway/postings"
)

// Keys of the values middleware leaves in the gin context.
const (
	loggerKey   = "api.logger"
	shopNoKey   = "api.shop_no"
	merchantKey = "api.merchant"
)

// withRequestID takes the client's X-Request-Id when it is a sane token
// (httpserve.RequestID), or makes one, echoes it in the answer and gives the request a logger that
// carries it, so that every line logged about the request names it.
func withRequestID(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		id := httpserve.RequestID(c.Request.Header)
		if id == "" {
			id = httpserve.NewRequestID()
		}
		c.Header("X-Request-Id", id)
		c.Set(loggerKey, log.With("request_id", id))
		c.Next()
	}
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
func accessLog(now func() time.Time, m *httpserve.ListenerMetrics) gin.HandlerFunc {
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
		m.Observe(route, c.Request.Method, status, code, elapsed)
		if reason, ok := c.Get(unavailableKey); ok {
			m.Unavailable(reason.(string))
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
