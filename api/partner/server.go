// Package partner is the gateway's internal network API
// (docs/network.md, docs/openapi-internal.yaml): the card processor's
// authorizations, clearings, reversals and refunds, and the rail partners'
// remittance reports, on a listener of its own; and the handlers of the
// /shop sandbox, where a test merchant sends the same commands for its own
// objects (api.SandboxHandlers). It answers in api's envelope, through
// api's error table, with api's middleware and decoder (api/surface.go),
// and calls the domains only through the interfaces of deps.go.
package partner

import (
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/api"
	"github.com/paygate/gateway/internal/httpserve"
	"github.com/paygate/gateway/postings"
)

// The internal network API (docs/network.md, docs/openapi-internal.yaml):
// the card processor's authorizations, clearings, reversals and refunds,
// and the rail partners' remittance reports. It runs on a listener of its
// own, reached only by those partners, and authenticates one bearer token.
// It answers in the same envelope, with the same middleware, as /shop.

// Deps are the internal server's dependencies.
type Deps struct {
	Log *slog.Logger
	// Network takes the card processor's messages, Rails the rail
	// partners' reports.
	Network Network
	Rails   Rails
	// Token is the bearer token every request but /healthz must carry
	// (Authorization: Bearer <token>). Empty refuses every request.
	Token string
	// Limits are the phases of a request (api/limits.go), as for /shop.
	Limits api.Limits
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

// NewServer returns the handler of the internal network API: api's
// envelope and middleware (api.NewSurface), then the routes of routes.go.
func NewServer(d Deps) http.Handler {
	if d.Metrics == nil {
		d.Metrics = httpserve.NewMetrics(httpserve.MetricsOptions{})
	}
	r := api.NewSurface(api.SurfaceOptions{Log: d.Log, Metrics: d.Metrics.Internal(), Limits: d.Limits,
		RequestTimeout: d.RequestTimeout, BodyBytesMax: d.BodyBytesMax, Now: d.Now})
	addRoutes(r, d)
	return r
}

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
			// The message is the error table's, fixed for every 401.
			api.WriteError(c, &postings.Error{Code: postings.EUNAUTHENTICATED, Reason: api.ReasonInternalToken})
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
