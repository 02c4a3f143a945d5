package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/httpserve"
	"github.com/paygate/gateway/internal/opsmetrics"
	"github.com/paygate/gateway/internal/pgha"
)

// backupInfoEvery is how often pgBackRest's info is asked for the newest
// backup (a process and a read of the repository; the alert is in hours).
const backupInfoEvery = 5 * time.Minute

// registerDatabaseMetrics registers every cell's figures with reg: its
// ledger writer, pool and read route (httpserve.DatabaseCollectors), and
// the on-call metrics of docs/operations.md, "Metrics" — the database's
// state read by one periodic collector per cell (started here, stopped by
// Close before the store closes), the failovers and writability its Watch
// sees, and its workers' health. Without GATEWAY_CELLS the one cell's are
// registered as they are, so the names and labels are what they were
// before cells; with cells each cell's carry cell="a1", so that one cell's
// lag, backlog or failing worker is told apart from another's.
func (a *App) registerDatabaseMetrics(cfg *config.Config, reg prometheus.Registerer) error {
	lastBackup, err := lastBackupOf(cfg)
	if err != nil {
		return err
	}
	for i, c := range a.cells {
		r := reg
		if c.id.Name != "" {
			r = prometheus.WrapRegistererWith(prometheus.Labels{"cell": c.id.Name}, reg)
		}
		var backup func(context.Context) (time.Time, error)
		if i == 0 {
			// One backup repository is configured (GATEWAY_BACKUP_REPO):
			// its age is reported once, with the home cell.
			backup = lastBackup
		}
		cs := a.cellCollectors(c, backup, a.log, cfg.NoWorkers)
		if err := registerAll(r, cs); err != nil {
			return err
		}
	}
	return nil
}

// cellCollectors are one cell's collectors, the state collector started.
func (a *App) cellCollectors(c *cell, lastBackup func(context.Context) (time.Time, error), log *slog.Logger, noWorkers bool) []prometheus.Collector {
	s := c.services
	state := opsmetrics.NewCollector(opsmetrics.Options{DB: c.store.DB.DB, Log: log, LastBackup: lastBackup,
		Backlogs: opsmetrics.Backlogs{Deliveries: s.Deliveries.Backlog, Remittances: s.Remit.Backlog, Holds: s.Network.HoldBacklog}})
	state.Start()
	a.closers = append(a.closers, state.Close)
	var route httpserve.ReadRouteStats
	if r := s.Ledger.ReadRoute(); r != nil { // a nil *ReadRoute in the interface would not be nil
		route = r
	}
	cs := append(httpserve.DatabaseCollectors(s.Ledger, c.store.DB.DB, route), state)
	cs = append(cs, opsmetrics.Database(c.watch.Writable, c.watch.WriterChanges)...)
	if !noWorkers && c.workers != nil {
		cs = append(cs, opsmetrics.Workers(func() []opsmetrics.Worker {
			hs := c.workers.Health()
			out := make([]opsmetrics.Worker, len(hs))
			for i, h := range hs {
				out[i] = opsmetrics.Worker{Name: h.Name, Running: h.Running, Steps: h.Steps, Failures: h.Failures,
					LastOK: h.LastOK, Failing: h.Failing != ""}
			}
			return out
		}))
	}
	return cs
}

// lastBackupOf is the newest backup's end in GATEWAY_BACKUP_REPO, asked
// every backupInfoEvery; nil when no repository is configured.
func lastBackupOf(cfg *config.Config) (func(context.Context) (time.Time, error), error) {
	if cfg.BackupRepo == "" {
		return nil, nil
	}
	repo, err := pgha.OpenRepo(cfg.BackupRepo)
	if err != nil {
		return nil, err
	}
	return opsmetrics.Every(backupInfoEvery, func(ctx context.Context) (time.Time, error) {
		backups, err := repo.Backups(ctx)
		if err != nil || len(backups) == 0 {
			return time.Time{}, err
		}
		return backups[len(backups)-1].Stop, nil
	}), nil
}

func registerAll(reg prometheus.Registerer, cs []prometheus.Collector) error {
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
