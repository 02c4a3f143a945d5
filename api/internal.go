package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/internal/httpserve"
	"github.com/paygate/gateway/postings"
)

// The internal network API (docs/network.md, docs/openapi-internal.yaml):
// the card processor's authorizations, clearings, reversals and refunds,
// and the rail partners' remittance reports. It runs on a listener of its
// own, reached only by those partners, and authenticates one bearer token.
// It answers in the same envelope, with the same middleware, as /shop.

// InternalDeps are the internal server's dependencies.
type InternalDeps struct {
	Log *slog.Logger
	// Network takes the card processor's messages, Rails the rail
	// partners' reports.
	Network Network
	Rails   Rails
	// Token is the bearer token every request but /healthz must carry
	// (Authorization: Bearer <token>). Empty refuses every request.
	Token string
	// Limits are the phases of a request (api/limits.go), as for /shop.
	Limits Limits
	// RequestTimeout bounds the body and the handler of every request
	// (context deadline). Default: what Limits leave them, 45 s.
	RequestTimeout time.Duration
	// BodyBytesMax bounds a request body. Default 64 KiB.
	BodyBytesMax int64
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Metrics is the process's registry, exposed here as GET /metrics;
	// nil: one of this server's own.
	Metrics *httpserve.Metrics
	// MetricsToken, when set, is the bearer token GET /metrics must carry
	// (GATEWAY_METRICS_TOKEN); empty: /metrics needs none, like /healthz.
	MetricsToken string
	// Workers reports the background workers' health for /healthz (nil:
	// no workers run in this process, and /healthz says nothing of them).
	Workers func() []httpserve.WorkerHealth
}

// NewInternalServer returns the handler of the internal network API.
func NewInternalServer(d InternalDeps) http.Handler {
	if d.Log == nil {
		d.Log = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	d.Limits = d.Limits.WithDefaults()
	if d.RequestTimeout <= 0 {
		d.RequestTimeout = d.Limits.HandlerTimeout()
	}
	if d.BodyBytesMax <= 0 {
		d.BodyBytesMax = BodyBytesMaxDefault
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Metrics == nil {
		d.Metrics = httpserve.NewMetrics(httpserve.MetricsOptions{})
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	_ = r.SetTrustedProxies(nil)
	addInternalRoutes(r, d)
	return r
}

// reasonInternalToken is the reason of a missing or wrong bearer token.
const reasonInternalToken postings.Reason = "internal_token"

// requireToken authenticates a request of the internal API: the
// Authorization header must be "Bearer <token>". The comparison is of the
// SHA-256 digests in constant time, so that neither the token's bytes nor
// its length leak through timing. Missing, malformed and wrong are one
// answer: 401.
func requireToken(token string) gin.HandlerFunc {
	want := sha256.Sum256([]byte(token))
	return func(c *gin.Context) {
		got, ok := bearerToken(c.Request.Header)
		given := sha256.Sum256([]byte(got))
		if subtle.ConstantTimeCompare(given[:], want[:]) != 1 || !ok || token == "" {
			c.Header("WWW-Authenticate", `Bearer realm="gateway-internal"`)
			writeError(c, &postings.Error{Code: postings.EUNAUTHENTICATED, Reason: reasonInternalToken,
				Message: messageBadToken})
			return
		}
		c.Next()
	}
}

// bearerToken reads "Authorization: Bearer <token>" (the scheme is
// case-insensitive, RFC 7235). It reports false when the header is absent,
// repeated or not a bearer credential.
func bearerToken(h http.Header) (string, bool) {
	vals := h.Values("Authorization")
	if len(vals) != 1 {
		return "", false
	}
	scheme, tok, found := strings.Cut(strings.TrimSpace(vals[0]), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}
