package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/paygate/gateway/api"
	"github.com/paygate/gateway/ledger"
)

// shutdownTimeout bounds the wait for requests in flight at shutdown. The
// limits of requests and connections are api.Limits (GATEWAY_REQUEST_TIMEOUT
// and the others, docs/security.md).
const shutdownTimeout = 15 * time.Second

func cmdServe(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "serve", "Run the gateway.")
	addr := fs.String("addr", envOr(e, "GATEWAY_ADDR", "127.0.0.1:8443"), "listen address (GATEWAY_ADDR)")
	plain := fs.Bool("plain-http", envBool(e, "GATEWAY_PLAIN_HTTP"),
		"serve plain HTTP, only behind a TLS-terminating proxy (GATEWAY_PLAIN_HTTP)")
	demo := fs.Bool("demo", envBool(e, "GATEWAY_DEMO"),
		"make sure a funded demo merchant exists and write its credentials to $GATEWAY_DATA_DIR/demo-merchant.json (GATEWAY_DEMO)")
	rateMaxAge := fs.Duration("fx-rate-max-age", envDuration(e, "GATEWAY_FX_RATE_MAX_AGE", 24*time.Hour),
		"FX rates older than this are refused (GATEWAY_FX_RATE_MAX_AGE)")
	holdExpiry := fs.Duration("hold-expiry", envDuration(e, "GATEWAY_HOLD_EXPIRY", 7*24*time.Hour),
		"authorization holds not cleared within this are released (GATEWAY_HOLD_EXPIRY)")
	internalAddr := fs.String("internal-addr", envOr(e, "GATEWAY_INTERNAL_ADDR", internalAddrDefault),
		"listen address of the internal network API (GATEWAY_INTERNAL_ADDR)")
	shards := fs.Int("ledger-shards", envInt(e, "GATEWAY_LEDGER_SHARDS", 0),
		"ledger writer shards; 0: one per two CPUs (GATEWAY_LEDGER_SHARDS, docs/performance.md)")
	batchWindow := fs.Duration("ledger-batch-window", envDuration(e, "GATEWAY_LEDGER_BATCH_WINDOW", 0),
		"how long a writer shard waits for more commands once it has one; 0: take what is queued (GATEWAY_LEDGER_BATCH_WINDOW)")
	noWorkers := fs.Bool("no-workers", envBool(e, "GATEWAY_NO_WORKERS"),
		"serve requests only: no hold expiry, remittance lifecycle or callback delivery (GATEWAY_NO_WORKERS)")
	boundsFlags := addNetworkBoundsFlags(e, fs)
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	networkBounds, err := boundsFlags.bounds()
	if err != nil {
		return err
	}
	gogc, memLimit := tuneGC(e)
	sealer, err := loadSealer(e)
	if err != nil {
		return err
	}
	workerCfg, err := readWorkerSettings(e)
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
	l := newServices(ledger.New(s.db, ledger.Config{Sealer: sealer, Logger: e.log, Shards: *shards, BatchWindow: *batchWindow}),
		domainSettings{fxRateMaxAge: *rateMaxAge, holdExpiry: *holdExpiry, networkBounds: networkBounds})
	defer l.Close()

	proxies, err := api.ParseTrustedProxies(e.getenv("GATEWAY_TRUSTED_PROXIES"))
	if err != nil {
		return err
	}
	rateLimit, err := api.ParseRateLimit(e.getenv("GATEWAY_RATE_LIMIT_RPS"), e.getenv("GATEWAY_RATE_LIMIT_BURST"))
	if err != nil {
		return err
	}
	limits, err := api.ParseLimits(e.getenv)
	if err != nil {
		return err
	}
	stopPprof, err := startPprof(e, e.getenv("GATEWAY_PPROF_ADDR"))
	if err != nil {
		return err
	}
	defer stopPprof()
	// One registry for both listeners, exposed on this one's /metrics.
	metrics := api.NewMetrics(api.MetricsOptions{Ledger: l.Ledger, DB: s.db.DB})
	handler := api.NewServer(api.Deps{Log: e.log, DB: s.db, Merchants: l.Ledger, Accounts: l.cards, Cards: l.cards,
		ReadKeys: l.Ledger, Bills: l.Ledger, Remittances: l.remit, Stats: l.Ledger, Network: l.network, Rails: l.remit,
		TrustedProxies: proxies, RateLimit: rateLimit, CallbackAllow: workerCfg.allow, Limits: limits, Metrics: metrics})
	tcp, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	// The per-client bound of connections, plain HTTP answered in the
	// envelope, then TLS (api.WrapListener).
	ln := api.WrapListener(tcp, tlsCfg, limits, proxies, e.log)
	scheme := "http"
	if tlsCfg != nil {
		scheme = "https"
	}
	srv := api.NewHTTPServer(handler, limits, e.log)
	if *demo {
		caCert := ""
		if tlsCfg != nil && e.getenv("GATEWAY_TLS_CERT") == "" {
			caCert, _ = filepath.Abs(filepath.Join(dataDir(e), "tls", "cert.pem"))
		}
		if err := ensureDemo(ctx, e, l, scheme+"://"+ln.Addr().String(), caCert, *rateMaxAge); err != nil {
			ln.Close()
			return fmt.Errorf("demo merchant: %w", err)
		}
	}
	fmt.Fprintf(e.stdout, "listening on %s://%s\n", scheme, ln.Addr())
	e.log.Info("gateway started", "addr", ln.Addr().String(), "scheme", scheme, "gogc", gogc, "gomemlimit", memLimit)
	// The internal network API, with the same TLS (docs/network.md).
	internal, err := startInternal(e, *internalAddr, tlsCfg, l, limits, metrics)
	if err != nil {
		ln.Close()
		return err
	}
	defer internal.stop()

	wctx, stopWorkers := context.WithCancel(ctx)
	defer stopWorkers()
	waitWorkers := func() {}
	if !*noWorkers {
		waitWorkers = startWorkers(wctx, e, l, workerCfg)
	}
	defer func() { stopWorkers(); waitWorkers() }()

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case err := <-internal.errc:
		srv.Close()
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

func envDuration(e *env, name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(e.getenv(name)); err == nil && d > 0 {
		return d
	}
	return def
}

func envInt(e *env, name string, def int) int {
	if n, err := strconv.Atoi(e.getenv(name)); err == nil && n >= 0 {
		return n
	}
	return def
}

func envBool(e *env, name string) bool {
	b, _ := strconv.ParseBool(e.getenv(name))
	return b
}
