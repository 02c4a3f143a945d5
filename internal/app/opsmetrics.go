package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/opsmetrics"
	"github.com/paygate/gateway/internal/pgha"
)

// backupInfoEvery is how often pgBackRest's info is asked for the newest
// backup (a process and a read of the repository; the alert is in hours).
const backupInfoEvery = 5 * time.Minute

// opsCollectors are the on-call metrics of the process (docs/operations.md,
// "Metrics"): the database's state read by one periodic collector (started
// here, stopped by Close before the store closes), the failovers and
// writability the Watch sees, and the workers' health.
func (a *App) opsCollectors(cfg *config.Config, log *slog.Logger) ([]prometheus.Collector, error) {
	o := opsmetrics.Options{DB: a.store.DB.DB, Log: log, Backlogs: opsmetrics.Backlogs{
		Deliveries: a.Services.Deliveries.Backlog, Remittances: a.Services.Remit.Backlog, Holds: a.Services.Network.HoldBacklog}}
	if cfg.BackupRepo != "" {
		repo, err := pgha.OpenRepo(cfg.BackupRepo)
		if err != nil {
			return nil, err
		}
		o.LastBackup = opsmetrics.Every(backupInfoEvery, func(ctx context.Context) (time.Time, error) {
			backups, err := repo.Backups(ctx)
			if err != nil || len(backups) == 0 {
				return time.Time{}, err
			}
			return backups[len(backups)-1].Stop, nil
		})
	}
	db := opsmetrics.NewCollector(o)
	db.Start()
	a.closers = append(a.closers, db.Close)
	cs := append([]prometheus.Collector{db}, opsmetrics.Database(a.watch.Writable, a.watch.WriterChanges)...)
	if !cfg.NoWorkers {
		cs = append(cs, opsmetrics.Workers(func() []opsmetrics.Worker {
			hs := a.allWorkerHealth()
			out := make([]opsmetrics.Worker, len(hs))
			for i, h := range hs {
				out[i] = opsmetrics.Worker{Name: h.Name, Running: h.Running, Steps: h.Steps, Failures: h.Failures,
					LastOK: h.LastOK, Failing: h.Failing != ""}
			}
			return out
		}))
	}
	return cs, nil
}
