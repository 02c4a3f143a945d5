// Package api is the HTTP surface of the gateway, on gin: the /shop JSON
// API in the envelope of the spec, and the operational endpoints. It alone
// knows gin; handlers turn requests into calls of the services, each area
// behind a small interface (deps.go), and their results into envelopes.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/paygate/gateway/internal/callbackurl"
	"github.com/paygate/gateway/internal/httplimits"
	"github.com/paygate/gateway/internal/httpserve"
)

// Defaults of Deps.
const (
	// RequestTimeoutDefault is the deadline of the body and the handler:
	// the spec's 60 seconds less the headers' 10 and the answer's 5
	// (Limits).
	RequestTimeoutDefault = httplimits.RequestBudgetDefault - httplimits.HeaderTimeoutDefault - httplimits.WriteReserveDefault
	BodyBytesMaxDefault   = 64 << 10
)

// Deps are the server's dependencies, given explicitly.
type Deps struct {
	Log *slog.Logger
	DB  httpserve.Pinger
	// Ready, when set, is /readyz's verdict instead of pinging DB: nil
	// means ready, an error says why not (httpserve.Readyz).
	Ready func(context.Context) error
	// The services, one interface per area (deps.go).
	Merchants   Merchants
	Accounts    Accounts
	Cards       Cards
	ReadKeys    ReadKeys
	Bills       Bills
	Remittances Remittances
	Stats       WriterStats
	// The merchant's webhooks and keys (webhook.go, keys.go).
	WebhookSettings WebhookSettings
	Webhooks        Webhooks
	Keys            Keys
	// Sandbox answers /shop/sandbox, where test merchants drive the
	// internal API's commands (api/partner.NewSandbox; sandbox_routes.go);
	// nil: every sandbox path is unknown.
	Sandbox *SandboxHandlers
	// TrustedProxies are the peers whose X-Forwarded-For is believed. Empty:
	// the client IP is always the TCP peer's.
	TrustedProxies []netip.Prefix
	// Limits are the phases of a request and the bounds of a client
	// (api/limits.go); the same value must go to NewHTTPServer.
	Limits Limits
	// RequestTimeout bounds the body and the handler of every request
	// (context deadline; 503 past it, 408 for a body). Default: what
	// Limits leave them, 45 s.
	RequestTimeout time.Duration
	// BodyBytesMax bounds a request body. Default 64 KiB.
	BodyBytesMax int64
	// RateLimit is each merchant's token bucket on /shop, per gateway
	// instance. Zero: 200 requests/s, bursts of 400.
	RateLimit RateLimit
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// CallbackAllow is the allow list a callback_url is checked against
	// when given: the callback sender's (internal/config reads it). The zero
	// value allows public addresses only.
	CallbackAllow callbackurl.AllowList
	// Metrics is the process's registry, shared with the internal
	// listener; nil: one of this server's own, with the ledger's counters.
	Metrics *httpserve.Metrics
	// versions are the API versions served (api/versions.go); nil: the
	// gateway's. Only a test serves others.
	versions versionTable
}

func (d *Deps) setDefaults() {
	o := d.surface()
	o.setDefaults()
	d.Log, d.Limits, d.RequestTimeout, d.BodyBytesMax, d.Now = o.Log, o.Limits, o.RequestTimeout, o.BodyBytesMax, o.Now
	if d.Metrics == nil {
		d.Metrics = httpserve.NewMetrics(httpserve.MetricsOptions{Ledger: d.Stats})
	}
	if len(d.versions) == 0 {
		d.versions = apiVersions
	}
}

// surface is what bounds every /shop request, as for any surface
// (surface.go).
func (d *Deps) surface() SurfaceOptions {
	o := SurfaceOptions{Log: d.Log, Limits: d.Limits, RequestTimeout: d.RequestTimeout, BodyBytesMax: d.BodyBytesMax, Now: d.Now}
	if d.Metrics != nil {
		o.Metrics = d.Metrics.Public()
	}
	return o
}

// NewServer returns the gateway's HTTP handler.
func NewServer(d Deps) http.Handler {
	d.setDefaults()
	r := newEngine()
	addRoutes(r, d)
	return r
}
