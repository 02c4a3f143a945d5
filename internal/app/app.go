// Package app builds the gateway from its configuration: the store, the
// ledger and its domains, the /shop and internal listeners, the workers.
// `gateway serve` is config.Load, Build, Run; a test can do the same in
// its own process. This is the wiring of docs/architecture.md: the one
// package besides the commands that may import everything.
package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/paygate/gateway/api/partner"
	"github.com/paygate/gateway/internal/cells"
	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/httpserve"
)

// ShutdownTimeout bounds the wait for requests in flight at shutdown. The
// limits of requests and connections are httplimits.Limits (docs/security.md).
const ShutdownTimeout = 15 * time.Second

// serveConnsMax is serve's database pool: the writer's shards, the reads
// of /shop and the workers.
const serveConnsMax = 40

// readConnsMax is the pool of DATABASE_READ_URL for serve's routed reads.
const readConnsMax = 16

// Options are what Build writes to.
type Options struct {
	// Log receives the structured log (nil: discarded).
	Log *slog.Logger
	// Stdout receives the lines a person reads at start: the certificate's
	// fingerprint and the addresses listened on (nil: discarded).
	Stdout io.Writer
	// Stderr receives the embedded PostgreSQL's output (nil: discarded).
	Stderr io.Writer
	// Build names what runs, for gateway_build_info.
	Build httpserve.BuildInfo
}

func (o *Options) setDefaults() {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
}

// App is a built gateway: listening, its workers not yet started.
type App struct {
	// Services are the ledger and its domains.
	Services *Services

	cfg       *config.Config
	log       *slog.Logger
	store     *Store
	public    *http.Server
	publicLn  net.Listener
	internal  *http.Server
	intLn     net.Listener
	console   *http.Server // nil with ConsoleAddr "off"
	consoleLn net.Listener
	watch     *database.Watch // the home cell's hosts' probe (silent hosts, metrics)
	cells     []*cell         // the one implicit cell, or GATEWAY_CELLS's, home first
	directory *cells.Cache    // nil without GATEWAY_CELLS
	draining  atomic.Bool     // Run is draining: /readyz answers 503
	closers   []func()        // in the order to run them

	closeOnce sync.Once
}

// Build opens the store (starting the embedded PostgreSQL without
// DATABASE_URL), applies the migrations, builds the ledger and its
// domains, and listens on both addresses. Nothing is served until Run;
// Close releases what Build made, whether or not Run ran.
func Build(ctx context.Context, cfg *config.Config, o Options) (a *App, err error) {
	o.setDefaults()
	a = &App{cfg: cfg, log: o.Log}
	defer func() {
		if err != nil {
			a.Close()
			a = nil
		}
	}()
	var tlsCfg *tls.Config
	if !cfg.PlainHTTP {
		if tlsCfg, err = TLSConfig(cfg, o.Stdout); err != nil {
			return a, err
		}
	} else {
		a.log.Warn("serving plain HTTP: only do this behind a proxy that terminates TLS")
	}
	// The cells: one per GATEWAY_CELLS, or the one implicit cell. The
	// home cell (the first) answers what is no merchant's: health, the
	// operator's console; /metrics has every cell's figures.
	if err := a.openCells(ctx, cfg, o); err != nil {
		return a, err
	}
	home := a.cells[0]
	a.store, a.watch, a.Services = home.store, home.watch, home.services
	sealer := home.sealer

	stopPprof, err := startPprof(a.log, cfg.PprofAddr)
	if err != nil {
		return a, err
	}
	a.closers = append(a.closers, stopPprof)

	// One registry for both listeners, exposed on the internal one's
	// /metrics, with every cell's database figures and on-call collectors
	// (opsmetrics.go).
	metrics := httpserve.NewMetrics(httpserve.MetricsOptions{Build: o.Build})
	if err := a.registerDatabaseMetrics(cfg, metrics.Registry()); err != nil {
		return a, err
	}
	handler := a.shopHandler(home.services, metrics)
	if a.directory != nil {
		handler = a.routeShop(metrics)
	}
	tcp, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return a, err
	}
	// The per-client bound of connections, plain HTTP answered in the
	// envelope, then TLS (httpserve.WrapListener).
	a.publicLn = httpserve.WrapListener(tcp, tlsCfg, cfg.Limits, cfg.Proxies, a.log)
	a.closers = append(a.closers, func() { a.publicLn.Close() })
	a.public = httpserve.NewHTTPServer(handler, cfg.Limits, a.log)
	scheme := "http"
	if tlsCfg != nil {
		scheme = "https"
	}
	if cfg.Demo { // one implicit cell only (config refuses it with GATEWAY_CELLS)
		caCert := ""
		if tlsCfg != nil && cfg.TLSCert == "" {
			caCert, _ = filepath.Abs(filepath.Join(cfg.DataDir, "tls", "cert.pem"))
		}
		if err := ensureDemo(ctx, a.log, cfg.DataDir, a.Services, scheme+"://"+a.publicLn.Addr().String(), caCert, cfg.FXRateMaxAge); err != nil {
			return a, fmt.Errorf("demo merchant: %w", err)
		}
	}
	fmt.Fprintf(o.Stdout, "listening on %s://%s\n", scheme, a.publicLn.Addr())

	// The internal network API, with the same TLS (docs/network.md).
	if err := a.listenInternal(o.Stdout, tlsCfg, metrics); err != nil {
		return a, err
	}
	// The web console, with the same TLS (docs/console.md); over cells
	// each page goes to its merchant's cell (docs/scaling.md).
	if err := a.listenConsole(ctx, o.Stdout, tlsCfg, sealer); err != nil {
		return a, err
	}
	return a, nil
}

// listenInternal listens for the internal network API on its address, with
// the TLS configuration of the public listener (nil: plain HTTP), recording
// its requests in the process's metrics.
func (a *App) listenInternal(stdout io.Writer, tlsCfg *tls.Config, metrics *httpserve.Metrics) error {
	token, source, err := InternalToken(a.cfg, true)
	if err != nil {
		return err
	}
	tcp, err := net.Listen("tcp", a.cfg.InternalAddr)
	if err != nil {
		return fmt.Errorf("internal API: %w", err)
	}
	// The same time limits as /shop, but no bound of connections per
	// client: the card network is one client, by design, and may open as
	// many as its load needs (docs/security.md).
	limits := a.cfg.Limits
	limits.ConnsPerClientMax = -1
	a.intLn = httpserve.WrapListener(tcp, tlsCfg, limits, nil, a.log)
	a.closers = append(a.closers, func() { a.intLn.Close() })
	scheme := "http"
	if tlsCfg != nil {
		scheme = "https"
	}
	var health func() []httpserve.WorkerHealth
	if !a.cfg.NoWorkers {
		health = a.workerHealth
	}
	partnerOf := func(s *Services) http.Handler {
		return partner.NewServer(partner.Deps{Log: a.log, Network: s.Network,
			Rails: s.Remit, Token: token, Limits: limits, Metrics: metrics, MetricsToken: a.cfg.MetricsToken,
			Workers: health})
	}
	handler := partnerOf(a.Services)
	if a.directory != nil {
		handler = a.routeInternal(partnerOf)
	}
	a.internal = httpserve.NewHTTPServer(handler, limits, a.log)
	fmt.Fprintf(stdout, "internal network API on %s://%s\n", scheme, a.intLn.Addr())
	a.log.Info("internal network API started", "addr", a.intLn.Addr().String(), "scheme", scheme, "token_from", source)
	return nil
}

// Addr is the address the /shop API listens on (with port 0, the one
// picked).
func (a *App) Addr() net.Addr { return a.publicLn.Addr() }

// InternalAddr is the address the internal network API listens on.
func (a *App) InternalAddr() net.Addr { return a.intLn.Addr() }

// Run starts the workers (unless NoWorkers) and serves both listeners until
// ctx ends or one of them fails; then it stops accepting, lets the
// requests in flight finish (ShutdownTimeout at most) and stops the
// workers. Call Close afterwards.
func (a *App) Run(ctx context.Context) error {
	wctx, stopWorkers := context.WithCancel(ctx)
	defer stopWorkers()
	for _, c := range a.cells {
		if c.workers != nil {
			c.workers.Start(wctx)
			defer c.workers.Stop()
		}
	}
	errc := make(chan error, 3)
	go func() { errc <- a.public.Serve(a.publicLn) }()
	go func() {
		if err := a.internal.Serve(a.intLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("internal API: %w", err)
		}
	}()
	if a.console != nil {
		go func() {
			if err := a.console.Serve(a.consoleLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("console: %w", err)
			}
		}()
	}
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		err = a.drain(errc)
		a.log.Info("gateway stopping")
	}
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	// The listeners stop accepting at once and drain together.
	var wg sync.WaitGroup
	var shutdownErr error
	servers := []*http.Server{a.public, a.internal}
	if a.console != nil {
		servers = append(servers, a.console)
	}
	for _, srv := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if e := srv.Shutdown(sctx); e != nil && !errors.Is(e, http.ErrServerClosed) && srv == a.public {
				shutdownErr = e
			}
		}()
	}
	wg.Wait()
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return shutdownErr
}

// drain is the start of a shutdown: /readyz answers 503 at once while
// every listener keeps serving for GATEWAY_SHUTDOWN_DRAIN, so that a load
// balancer polling readiness stops sending new requests before the
// listeners close (a client would otherwise meet connection refused).
func (a *App) drain(errc <-chan error) error {
	if a.cfg.ShutdownDrain <= 0 {
		a.draining.Store(true)
		return nil
	}
	// A second interrupt ends the drain at once: someone at a terminal
	// (make run) who presses Ctrl-C twice wants the gateway gone now, and
	// the embedded PostgreSQL still stops cleanly after it. The handler is
	// in place before readiness fails, so a signal sent once /readyz says
	// "draining" always reaches it.
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	a.draining.Store(true)
	a.log.Info("gateway draining: /readyz answers 503; interrupt again to stop at once", "drain", a.cfg.ShutdownDrain.String())
	select {
	case <-time.After(a.cfg.ShutdownDrain):
		return nil
	case <-again:
		a.log.Info("gateway drain cut short by a second interrupt")
		return nil
	case err := <-errc: // a listener failed: nothing left to drain
		return err
	}
}

// ready is /readyz's verdict: not while draining, and only while the
// Watch's probe of a moment ago found a database host that takes writes
// (not in recovery, not read-only), so that a load balancer takes the
// gateway out while it cannot write.
func (a *App) ready(context.Context) error {
	if a.draining.Load() {
		return httpserve.NotReady("draining")
	}
	// With cells, one cell down is its merchants' 503s, not the gateway
	// out of the load balancer for every cell's (docs/scaling.md).
	for _, c := range a.cells {
		if c.watch.Writable() {
			return nil
		}
	}
	return httpserve.NotReady("database not writable")
}

// Close releases what Build made: the listeners, the ledger's writer, the
// database and the embedded PostgreSQL if Build started it. It is safe to
// call more than once.
func (a *App) Close() {
	a.closeOnce.Do(func() {
		for i := len(a.closers) - 1; i >= 0; i-- {
			a.closers[i]()
		}
	})
}

// workerHealth is the workers' health for the internal listener's
// /healthz.
func (a *App) workerHealth() []httpserve.WorkerHealth {
	hs := a.allWorkerHealth()
	out := make([]httpserve.WorkerHealth, len(hs))
	for i, h := range hs {
		out[i] = httpserve.WorkerHealth{Name: h.Name, Running: h.Running, Steps: h.Steps, LastRun: h.LastRun, LastOK: h.LastOK,
			Failing: h.Failing != ""}
	}
	return out
}
