package api

import (
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/api/views"
	"github.com/paygate/gateway/internal/httpserve"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// What another surface on the gateway's envelope builds with: the internal
// network API and the sandbox's handlers (api/partner), which answer in the
// same envelope, through the same error table, with the same middleware
// and the same strict decoder as /shop. These are the exported names of
// the helpers the /shop handlers call by their own names; a second copy in
// api/partner would drift.

// SurfaceOptions are what every request of a surface is bounded by.
type SurfaceOptions struct {
	Log *slog.Logger
	// Metrics are the surface's listener's request metrics
	// (httpserve.Metrics.Internal for the internal API).
	Metrics *httpserve.ListenerMetrics
	// Limits are the phases of a request (api/limits.go).
	Limits Limits
	// RequestTimeout bounds the body and the handler (context deadline).
	// Default: what Limits leave them, 45 s.
	RequestTimeout time.Duration
	// BodyBytesMax bounds a request body. Default 64 KiB.
	BodyBytesMax int64
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

func (o *SurfaceOptions) setDefaults() {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	o.Limits = o.Limits.WithDefaults()
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = o.Limits.HandlerTimeout()
	}
	if o.BodyBytesMax <= 0 {
		o.BodyBytesMax = BodyBytesMaxDefault
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// NewSurface returns a router whose every request passes the middleware of
// /shop but the API version, in the same order (request id and logger,
// access log, panic recovery, time-out, body deadlines, header and body
// bounds), and whose unknown paths and methods are answered in the
// envelope.
func NewSurface(o SurfaceOptions) *gin.Engine {
	o.setDefaults()
	r := newEngine()
	r.Use(door(o, nil)...)
	r.NoRoute(handleNoRoute())
	r.NoMethod(handleNoMethod())
	return r
}

// newEngine is a gin router that answers everything itself: no redirect
// (it would not carry the envelope), 405 for a known path's other methods,
// and no client IP guessed from headers (httpserve.ClientIP decides, from the
// trusted proxies).
func newEngine() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	_ = r.SetTrustedProxies(nil)
	return r
}

// door is the middleware every request of a surface passes, in order;
// version, when given, reads the API version right after panic recovery,
// so that every later answer says its version (/shop).
func door(o SurfaceOptions, version gin.HandlerFunc) []gin.HandlerFunc {
	first := []gin.HandlerFunc{withRequestID(o.Log), accessLog(o.Now, o.Metrics), recoverPanic()}
	if version != nil {
		first = append(first, version)
	}
	return append(first,
		withTimeout(o.RequestTimeout),
		guardBody(o.Limits.BodyIdleTimeout),
		limitHeaders(o.Limits.HeaderBytesMax),
		limitBody(o.BodyBytesMax),
	)
}

// ReasonInternalToken is the reason of a missing or wrong bearer token on
// the internal API: answered 401 with a fixed message (envelope.go).
const (
	ReasonInternalToken                 = reasonInternalToken
	reasonInternalToken postings.Reason = "internal_token"
)

// WriteError answers err in the envelope (writeError).
func WriteError(c *gin.Context, err error) { writeError(c, err) }

// WriteOK answers success with data (writeOK).
func WriteOK(c *gin.Context, data any) { writeOK(c, data) }

// Field is one member of a request object for DecodeObject.
type Field = field

// NewField is a member name of the object, required or not, decoded into
// into (a *string, *AmountText, …: decode.go).
func NewField(name string, required bool, into any) Field {
	return field{name: name, required: required, into: into}
}

// AmountText is an amount as the request wrote it, parsed once its
// currency is known.
type AmountText = amountText

// ReadBody reads the whole body under the surface's bounds (readBody).
func ReadBody(c *gin.Context) ([]byte, error) { return readBody(c) }

// DecodeObject decodes one JSON object strictly (decodeObject).
func DecodeObject(raw []byte, fields []Field) error { return decodeObject(raw, fields) }

// ParseMoney parses an amount in a currency (parseMoney).
func ParseMoney(currency string, amount AmountText) (postings.Currency, int64, error) {
	return parseMoney(currency, amount)
}

// CheckCardNo checks a card number field (checkCardNo).
func CheckCardNo(name, s string) error { return checkCardNo(name, s) }

// QueryCardNo is the required cardNo query parameter (queryCardNo).
func QueryCardNo(c *gin.Context) (string, error) { return queryCardNo(c) }

// Money renders an amount in its currency (views.Money).
func Money(minor int64, code string) postings.Money { return views.Money(minor, code) }

// Timestamp renders a time as every answer does (views.Timestamp).
func Timestamp(t time.Time) string { return views.Timestamp(t) }

// TimestampOrNil renders an optional time (views.TimestampOrNil).
func TimestampOrNil(t *time.Time) *string { return views.TimestampOrNil(t) }

// The /shop request's own values, for the sandbox's handlers, which /shop's
// authentication and POST middleware run before.

// MerchantOf is the authenticated merchant of a /shop request.
func MerchantOf(c *gin.Context) *merchant.Merchant { return merchantOf(c) }

// IdempotencyOf is the request's held Idempotency-Key, nil without one.
func IdempotencyOf(c *gin.Context) *ledger.Idempotency { return idempotencyOf(c) }

// Body is the body a /shop POST read before its handler.
func Body(c *gin.Context) []byte { return bodyOf(c) }
