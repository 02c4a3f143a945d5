package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/paygate/gateway/api"
	"github.com/paygate/gateway/ledger"
)

// Limits of the HTTP server. The 60-second request time-out of the spec is
// enforced per request by the API; these bound the connection itself.
const (
	readHeaderTimeout = 10 * time.Second
	writeTimeout      = 70 * time.Second // above the 60-second request time-out
	idleTimeout       = 120 * time.Second
	headerBytesMax    = 64 << 10
	shutdownTimeout   = 15 * time.Second
)

func cmdServe(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "serve", "Run the gateway.")
	addr := fs.String("addr", envOr(e, "GATEWAY_ADDR", "127.0.0.1:8443"), "listen address (GATEWAY_ADDR)")
	plain := fs.Bool("plain-http", envBool(e, "GATEWAY_PLAIN_HTTP"),
		"serve plain HTTP, only behind a TLS-terminating proxy (GATEWAY_PLAIN_HTTP)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	sealer, err := loadSealer(e)
	if err != nil {
		return err
	}
	var tlsCfg *tls.Config
	if !*plain {
		if tlsCfg, err = tlsConfig(e); err != nil {
			return err
		}
	} else {
		e.log.Warn("serving plain HTTP: only do this behind a proxy that terminates TLS")
	}
	s, err := openStore(ctx, e, ledger.DBOptions{ConnsMax: 40})
	if err != nil {
		return err
	}
	defer s.close()
	l := ledger.New(s.db, ledger.Config{Sealer: sealer, Logger: e.log})
	defer l.Close()

	handler := api.NewServer(api.Deps{Log: e.log, DB: s.db})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	scheme := "http"
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
		scheme = "https"
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    headerBytesMax,
		ErrorLog:          nil,
	}
	fmt.Fprintf(e.stdout, "listening on %s://%s\n", scheme, ln.Addr())
	e.log.Info("gateway started", "addr", ln.Addr().String(), "scheme", scheme)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	e.log.Info("gateway stopping")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func envOr(e *env, name, def string) string {
	if v := e.getenv(name); v != "" {
		return v
	}
	return def
}

func envBool(e *env, name string) bool {
	b, _ := strconv.ParseBool(e.getenv(name))
	return b
}
