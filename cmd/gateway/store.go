package main

import (
	"context"

	"github.com/paygate/gateway/cmd/gateway/internal/cellcmd"
	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/database"
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
// the domains with the environment's settings; in a cell, checked to be
// that cell (cellcmd.Open).
func openLedger(ctx context.Context, e *env) (*app.Store, *app.Services, error) {
	cfg, err := e.config()
	if err != nil {
		return nil, nil, err
	}
	return cellcmd.Open(ctx, cfg, e.cell, false, e.stderr, e.log)
}
