package app

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"

	"github.com/paygate/gateway/internal/httplimits"
)

// startPprof serves Go's profiles (net/http/pprof) on addr when
// GATEWAY_PPROF_ADDR names one, for `go tool pprof
// http://ADDR/debug/pprof/profile?seconds=10` (docs/performance.md). Only a
// loopback address is accepted (internal/config refuses any other, and so
// does this, a second time, since it is the listener): profiles describe
// the process's insides and the listener has no authentication. It returns
// a stop function.
func startPprof(log *slog.Logger, addr string) (func(), error) {
	if addr == "" {
		return func() {}, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("GATEWAY_PPROF_ADDR: %w", err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("GATEWAY_PPROF_ADDR must be a loopback address such as 127.0.0.1:6060, not %q", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("GATEWAY_PPROF_ADDR: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: httplimits.HeaderTimeoutDefault}
	log.Info("pprof listening", "addr", ln.Addr().String())
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("pprof listener", "error", err)
		}
	}()
	return func() { _ = srv.Close() }, nil
}
