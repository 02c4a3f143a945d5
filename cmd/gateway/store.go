package main

import (
	"context"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/cells"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/domains"
	"github.com/paygate/gateway/ledger"
)

// openStore opens the database of the environment's configuration
// (app.OpenStore: DATABASE_URL or the embedded cluster), migrated.
func openStore(ctx context.Context, e *env, opts database.DBOptions) (*app.Store, error) {
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	return app.OpenStore(ctx, cfg, e.stderr, opts)
}

// openLedger opens the store and a ledger on it with one writer shard, and
// the domains with the environment's settings.
func openLedger(ctx context.Context, e *env) (*app.Store, *app.Services, error) {
	cfg, err := e.config()
	if err != nil {
		return nil, nil, err
	}
	s, err := app.OpenStore(ctx, cfg, e.stderr, database.DBOptions{ConnsMax: 8})
	if err != nil {
		return nil, nil, err
	}
	sealer, err := app.LoadSealer(ctx, cfg, s.DB)
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	// In a cell, what the command mints carries the cell, as serve's.
	var id cells.Identity
	if e.cell != "" {
		// Verify over cells opens a cell that fails the check, and names
		// what is wrong with it as a break (cellaudit) instead.
		if id, err = cells.Check(ctx, s.DB, e.cell); err != nil && !e.verifying {
			s.Close()
			return nil, nil, err
		}
	}
	l := ledger.New(s.DB, ledger.Config{Logger: e.log, Shards: 1, Domains: domains.All()})
	return s, app.NewCellServices(l, sealer, cfg, id), nil
}
