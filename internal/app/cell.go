package app

import (
	"context"
	"fmt"

	"github.com/paygate/gateway/internal/cells"
	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/domains"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/workers"
	"github.com/paygate/gateway/ledger"
)

// cell is one database's part of the app: its store and the probe of its
// hosts, its ledger, domains and workers. Without GATEWAY_CELLS the app
// has one, the database of DATABASE_URL or the embedded cluster, exactly
// as before cells; with it, one per cell, each built by openCell the same
// way (docs/scaling.md, "Routing").
type cell struct {
	id       cells.Identity // zero: the one implicit cell
	watch    *database.Watch
	store    *Store
	sealer   *merchant.Sealer
	services *Services
	workers  *workers.Group // nil with NoWorkers
}

// openCell builds a cell from cfg (its DatabaseURL the cell's): the store
// migrated, the data key checked, the ledger, the domains and the workers,
// not started. name is the cell's ("": no cells); its database must have
// been made that cell (cells.Check). What it opens is closed by a.Close.
func (a *App) openCell(ctx context.Context, cfg *config.Config, o Options, name string) (*cell, error) {
	c := &cell{}
	// The Watch stops after the store closes (closers run in reverse).
	c.watch = database.NewWatch(database.WatchOptions{ProbeTimeout: cfg.DBProbeTimeout, Log: a.log})
	a.closers = append(a.closers, c.watch.Close)
	var err error
	if c.store, err = OpenStore(ctx, cfg, o.Stderr, database.DBOptions{ConnsMax: serveConnsMax, Watch: c.watch,
		TCP: database.TCPOptions{UserTimeout: cfg.DBTCPUserTimeout}}); err != nil {
		return nil, cellError(name, err)
	}
	a.closers = append(a.closers, c.store.Close)
	if name != "" {
		if c.id, err = cells.Check(ctx, c.store.DB, name); err != nil {
			return nil, err
		}
	}
	// The data key is checked against the database before anything uses
	// it (issue 31: a wrong or missing key used to run silently).
	if c.sealer, err = LoadSealer(ctx, cfg, c.store.DB); err != nil {
		return nil, cellError(name, err)
	}
	l := ledger.New(c.store.DB, ledger.Config{Logger: a.log, Shards: cfg.LedgerShards,
		BatchWindow: cfg.LedgerBatchWindow, CommitTimeout: cfg.DBCommitTimeout, Domains: domains.All()})
	// The ledger stops before the store closes: closers run in reverse.
	a.closers = append(a.closers, l.Close)
	closeReads, err := AttachReadRoute(a.log, l, cfg.ReadURL, ReadWait(cfg.ReadWaitMs), database.DBOptions{ConnsMax: readConnsMax})
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, closeReads)
	c.services = NewCellServices(l, c.sealer, cfg, c.id)
	// The authentication times not written yet are written before the
	// ledger stops (closers run in reverse).
	a.closers = append(a.closers, c.services.Merchants.Close)
	if !cfg.NoWorkers {
		if c.workers, err = newWorkers(cfg, c.services, a.log); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// cellError names the cell an error of its opening comes from.
func cellError(name string, err error) error {
	if name == "" {
		return err
	}
	return fmt.Errorf("cell %s: %w", name, err)
}

// openCells opens every cell of cfg, the home cell (the directory's)
// first, or the one implicit cell without GATEWAY_CELLS.
func (a *App) openCells(ctx context.Context, cfg *config.Config, o Options) error {
	if len(cfg.Cells) == 0 {
		c, err := a.openCell(ctx, cfg, o, "")
		if err != nil {
			return err
		}
		a.cells = []*cell{c}
		return nil
	}
	for _, cc := range cfg.Cells {
		c, err := a.openCell(ctx, cfg.ForCell(cc), o, cc.Name)
		if err != nil {
			return err
		}
		a.cells = append(a.cells, c)
	}
	a.directory = cells.NewCache(cells.NewDirectory(a.cells[0].store.DB))
	a.log.Info("serving cells", "cells", len(a.cells), "home", cfg.Cells[0].Name)
	return nil
}
