// Package httplimits holds the HTTP surface's bounds as plain values: what
// one request and one client may hold of the gateway (Limits) and each
// merchant's rate (RateLimit), with their defaults and checks. The
// configuration reads them (internal/config) and the API enforces them
// (api); they live here, below both, so that reading a setting does not
// link the HTTP server (gin, prometheus) into every command that reads
// the configuration. It imports only the standard library and postings.
package httplimits

import (
	"time"

	"github.com/paygate/gateway/postings"
)

// Limits bound what one request and one client may hold of the gateway
// (docs/security.md, "Time-outs" and "Connections per client"). The spec's
// 60 seconds (section 8) is the whole of a request, from its first byte to
// the last byte of the answer, and is split into phases that add up to it:
//
//	headers ≤ HeaderTimeout │ body + handler ≤ handlerTimeout │ answer ≤ WriteReserve
//	└──────────────────────────── RequestBudget ────────────────────────────┘
//
// A body must also keep coming: a pause longer than BodyIdleTimeout ends
// the request with a 408 long before its budget.
//
// The zero value of each field means its default.
type Limits struct {
	// RequestBudget is the whole of a request. 60 s. GATEWAY_REQUEST_TIMEOUT.
	RequestBudget time.Duration
	// HeaderTimeout bounds the request line and headers, counted from the
	// request's first byte (on a new connection, it bounds the TLS handshake
	// too, before). 10 s. GATEWAY_HEADER_TIMEOUT.
	HeaderTimeout time.Duration
	// BodyIdleTimeout is the longest pause the gateway waits for the next
	// bytes of a body. 10 s. GATEWAY_BODY_IDLE_TIMEOUT.
	BodyIdleTimeout time.Duration
	// WriteReserve is kept out of the handler's time for writing the answer
	// once its deadline has passed. 5 s. GATEWAY_WRITE_RESERVE.
	WriteReserve time.Duration
	// IdleTimeout closes a keep-alive connection that brings no new request.
	// 120 s. GATEWAY_IDLE_TIMEOUT.
	IdleTimeout time.Duration
	// HeaderBytesMax bounds the request line and headers; past it the answer
	// is 431. 64 KiB. GATEWAY_HEADER_BYTES_MAX.
	HeaderBytesMax int
	// ConnsPerClientMax bounds the connections one client address holds at
	// once (an IPv4 address, an IPv6 /64); trusted proxies are not counted.
	// 128; negative: no bound. GATEWAY_CONNS_PER_CLIENT_MAX ("off").
	ConnsPerClientMax int
}

// Defaults of Limits.
const (
	RequestBudgetDefault     = 60 * time.Second // spec section 8
	HeaderTimeoutDefault     = 10 * time.Second
	BodyIdleTimeoutDefault   = 10 * time.Second
	WriteReserveDefault      = 5 * time.Second
	IdleTimeoutDefault       = 120 * time.Second
	HeaderBytesMaxDefault    = 64 << 10
	ConnsPerClientMaxDefault = 128
)

// Bounds of the settings, checked by Check.
const (
	handlerTimeoutMin = time.Second
	// HeaderBytesMin and HeaderBytesLimit bound HeaderBytesMax.
	HeaderBytesMin   = 4 << 10
	HeaderBytesLimit = HeaderBytesBackstop / 2
	// ConnsPerClientLimit bounds ConnsPerClientMax.
	ConnsPerClientLimit = 100_000
	// HeaderBytesBackstop is net/http's own bound on the request line and
	// headers (http.Server.MaxHeaderBytes). Past it net/http answers a
	// plain-text 431 itself, outside the envelope, so it sits far above
	// HeaderBytesMax, which the gateway enforces and answers in the
	// envelope (api's limitHeaders).
	HeaderBytesBackstop = 1 << 20
)

// WithDefaults gives each zero field its default.
func (l Limits) WithDefaults() Limits {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&l.RequestBudget, RequestBudgetDefault)
	def(&l.HeaderTimeout, HeaderTimeoutDefault)
	def(&l.BodyIdleTimeout, BodyIdleTimeoutDefault)
	def(&l.WriteReserve, WriteReserveDefault)
	def(&l.IdleTimeout, IdleTimeoutDefault)
	if l.HeaderBytesMax <= 0 {
		l.HeaderBytesMax = HeaderBytesMaxDefault
	}
	if l.ConnsPerClientMax == 0 {
		l.ConnsPerClientMax = ConnsPerClientMaxDefault
	}
	return l
}

// HandlerTimeout is the deadline of the body and the handler, counted from
// the end of the headers: what the budget leaves once the headers and the
// answer have their share. 45 s by default.
func (l Limits) HandlerTimeout() time.Duration {
	return l.RequestBudget - l.HeaderTimeout - l.WriteReserve
}

// WriteTimeout is the connection's write deadline, counted from the end of
// the headers like the handler's: nothing of the answer is written past the
// budget.
func (l Limits) WriteTimeout() time.Duration { return l.RequestBudget - l.HeaderTimeout }

// Check applies the defaults and checks the bounds and that the phases fit
// the budget (the configuration calls it, internal/config); an error is a
// postings.Error whose field is the setting's variable.
func (l Limits) Check() (Limits, error) {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"GATEWAY_REQUEST_TIMEOUT", l.RequestBudget}, {"GATEWAY_HEADER_TIMEOUT", l.HeaderTimeout},
		{"GATEWAY_BODY_IDLE_TIMEOUT", l.BodyIdleTimeout}, {"GATEWAY_WRITE_RESERVE", l.WriteReserve},
		{"GATEWAY_IDLE_TIMEOUT", l.IdleTimeout},
	} {
		if d.v < 0 {
			return Limits{}, postings.FieldErrorf(d.name, "%v is negative", d.v)
		}
	}
	if l.HeaderBytesMax != 0 && (l.HeaderBytesMax < HeaderBytesMin || l.HeaderBytesMax > HeaderBytesLimit) {
		return Limits{}, postings.FieldErrorf("GATEWAY_HEADER_BYTES_MAX", "%d is not a number of bytes from %d to %d",
			l.HeaderBytesMax, HeaderBytesMin, HeaderBytesLimit)
	}
	if l.ConnsPerClientMax > ConnsPerClientLimit {
		return Limits{}, postings.FieldErrorf("GATEWAY_CONNS_PER_CLIENT_MAX", "%d is more than %d", l.ConnsPerClientMax, ConnsPerClientLimit)
	}
	l = l.WithDefaults()
	if l.HandlerTimeout() < handlerTimeoutMin {
		return Limits{}, postings.FieldErrorf("GATEWAY_REQUEST_TIMEOUT",
			"%v leaves the handler %v once the headers (%v) and the answer (%v) have their share; it needs at least %v",
			l.RequestBudget, l.HandlerTimeout(), l.HeaderTimeout, l.WriteReserve, handlerTimeoutMin)
	}
	if l.BodyIdleTimeout > l.HandlerTimeout() {
		return Limits{}, postings.FieldErrorf("GATEWAY_BODY_IDLE_TIMEOUT", "%v is longer than the %v a body and its handler have",
			l.BodyIdleTimeout, l.HandlerTimeout())
	}
	return l, nil
}
