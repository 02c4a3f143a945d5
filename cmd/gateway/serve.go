package main

import (
	"context"
	"runtime/debug"
	"sync"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/database"
)

// cmdServe is the whole of `gateway serve`: the configuration, read once
// from the flags and the environment (internal/config), the collector's
// tuning, then the app built and run (internal/app).
func cmdServe(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "serve", "Run the gateway: the /shop HTTPS API, the internal network API and the workers.\n"+
		"Every flag has a variable behind it (docs/operations.md); a flag wins over its variable.")
	flags := config.AddFlags(fs)
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	cfg, err := flags.Load(e.getenv)
	if err != nil {
		return configError(err)
	}
	e.setLogLevel(cfg.LogLevel)
	gogc, memLimit := app.TuneGC(cfg)
	e.log.LogAttrs(ctx, slogInfo, "configuration", cfg.Attrs()...)
	a, err := app.Build(ctx, cfg, app.Options{Log: e.log, Stdout: e.stdout, Stderr: e.stderr,
		Build: buildInfo(debug.ReadBuildInfo())})
	if err != nil {
		return err
	}
	defer a.Close()
	// Least privilege (docs/security.md, "Database roles"): never serve as
	// a superuser, unless a development machine says so explicitly.
	// Every cell's, with GATEWAY_CELLS.
	for _, db := range a.Databases() {
		if err := database.CheckServingRole(ctx, db, e.getenv("DATABASE_ALLOW_SUPERUSER") == "1"); err != nil {
			return usageError(err.Error())
		}
	}
	if !cfg.NoWorkers {
		// The data key's re-seal after a rotation, in the background, in
		// every cell; it stops before the app closes (defers run in
		// reverse).
		rctx, stop := context.WithCancel(ctx)
		var done sync.WaitGroup
		for _, k := range a.Keyrings() {
			log := e.log
			if k.Cell != "" {
				log = log.With("cell", k.Cell)
			}
			done.Go(func() { app.KeepResealing(rctx, log, k.DB, k.Sealer, resealEvery) })
		}
		defer func() { stop(); done.Wait() }()
	}
	e.log.Info("gateway started", "addr", a.Addr().String(), "internal_addr", a.InternalAddr().String(),
		"gogc", gogc, "gomemlimit", memLimit)
	return a.Run(ctx)
}
