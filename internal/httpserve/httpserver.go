package httpserve

import (
	"context"
	"crypto/tls"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/paygate/gateway/internal/httplimits"
)

// NewHTTPServer returns the http.Server that serves h within lim: the
// connection-level half of the Limits (the handler's half is in
// api.NewServer's middleware). Its deadlines, counted by net/http:
//
//   - ReadHeaderTimeout: the TLS handshake of a new connection, then the
//     request line and headers from the request's first byte;
//   - WriteTimeout, from the end of the headers: the body, the handler and
//     the answer together end by the budget;
//   - ReadTimeout, from the request's first byte: no read of the request
//     goes on once only the answer's reserve is left (GuardBody's tighter
//     deadlines take over for the body);
//   - IdleTimeout between requests on a kept-alive connection.
//
// MaxHeaderBytes is a backstop far above lim.HeaderBytesMax, which the
// handler answers in the envelope.
func NewHTTPServer(h http.Handler, lim httplimits.Limits, log *slog.Logger) *http.Server {
	lim = lim.WithDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: lim.HeaderTimeout,
		ReadTimeout:       lim.RequestBudget - lim.WriteReserve,
		WriteTimeout:      lim.WriteTimeout(),
		IdleTimeout:       lim.IdleTimeout,
		MaxHeaderBytes:    httplimits.HeaderBytesBackstop,
		ErrorLog:          serverErrorLog(log),
	}
}

// WrapListener turns ln, a TCP listener, into the one the gateway serves:
// the per-client bound of connections first (a refused connection costs no
// handshake), then, with tlsCfg, plain HTTP answered with an enveloped 400,
// then TLS. Without tlsCfg (behind a TLS-terminating proxy) it serves
// plain HTTP; list the proxy in proxies, or every client behind it shares
// one bound.
func WrapListener(ln net.Listener, tlsCfg *tls.Config, lim httplimits.Limits, proxies []netip.Prefix, log *slog.Logger) net.Listener {
	lim = lim.WithDefaults()
	ln = LimitConnsPerClient(ln, lim.ConnsPerClientMax, proxies, log)
	if tlsCfg != nil {
		ln = tls.NewListener(RefusePlainHTTP(ln, log), tlsCfg)
	}
	return ln
}

// serverErrorLog sends net/http's own messages to the structured log.
// Failed TLS handshakes are the clients' doing (scanners, old clients, the
// plain HTTP already logged): debug. The rest is a warning.
func serverErrorLog(l *slog.Logger) *log.Logger {
	return log.New(serverErrorWriter{l}, "", 0)
}

type serverErrorWriter struct{ log *slog.Logger }

func (w serverErrorWriter) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	level := slog.LevelWarn
	if strings.Contains(msg, "TLS handshake error") {
		level = slog.LevelDebug
	}
	w.log.Log(context.Background(), level, "http server", "error", msg)
	return len(p), nil
}
