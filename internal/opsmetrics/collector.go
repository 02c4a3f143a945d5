package opsmetrics

import (
	"context"
	"database/sql"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// IntervalDefault is how often the collector reads the database: often
// enough for a lag or backlog alert of a few minutes, rare enough to cost
// nothing (a handful of aggregates over partial indexes).
const IntervalDefault = 15 * time.Second

// readTimeout bounds one reading: a silent database must not hold the
// collector (its last reading stays, and its age says it is old).
const readTimeout = 5 * time.Second

// Options of a Collector.
type Options struct {
	DB *sql.DB // the gateway's pool (the primary)
	// Backlogs are read from the domains that own them (callbacks,
	// remittances, holds).
	Backlogs Backlogs
	// LastBackup gives the newest backup's end (pgBackRest info); nil: no
	// backup metric.
	LastBackup func(context.Context) (time.Time, error)
	Interval   time.Duration // IntervalDefault when 0
	Log        *slog.Logger
	Now        func() time.Time // the clock of the ages; time.Now when nil
}

// Collector reads State every interval and reports the last reading: a
// scrape costs the database nothing.
type Collector struct {
	o Options

	mu     sync.Mutex
	state  State
	ok     bool  // a reading succeeded at least once
	errors int64 // readings that failed, whole or in part

	stop chan struct{}
	done chan struct{}
}

// NewCollector makes a Collector; Start reads once and starts the loop.
func NewCollector(o Options) *Collector {
	if o.Interval <= 0 {
		o.Interval = IntervalDefault
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Collector{o: o, stop: make(chan struct{}), done: make(chan struct{})}
}

// Start reads the state once (so that the first scrape has it) and then
// every interval until Close.
func (c *Collector) Start() {
	c.Refresh()
	go func() {
		defer close(c.done)
		t := time.NewTicker(c.o.Interval)
		defer t.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-t.C:
				c.Refresh()
			}
		}
	}()
}

// Close stops the loop Start started.
func (c *Collector) Close() {
	select {
	case <-c.stop:
		return
	default:
	}
	close(c.stop)
	<-c.done
}

// Refresh reads the state now. A reading that failed in part keeps what it
// read; one that failed whole keeps the previous reading.
func (c *Collector) Refresh() {
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	s, err := Read(ctx, c.o.DB, c.o.Backlogs, c.o.LastBackup)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.errors++
		c.o.Log.Warn("metrics: reading the database's state", "error", err)
	}
	if !s.At.IsZero() {
		c.state, c.ok = s, true
	}
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	descReadAt     = desc("gateway_db_state_read_timestamp_seconds", "When the database's state below was last read (Unix time).")
	descReadErrors = desc("gateway_db_state_read_errors_total", "Readings of the database's state that failed, whole or in part.")
	descInRecovery = desc("gateway_pg_in_recovery", "1 while the server the gateway writes to is in recovery (a standby): no writes.")
	descStandbys   = desc("gateway_pg_replication_standbys", "Standbys connected to the primary by state and sync_state (pg_stat_replication).",
		"state", "sync_state")
	descSyncStandbys = desc("gateway_pg_sync_standbys", "Standbys streaming as synchronous (sync or quorum): 0 means commits wait or a single copy.")
	descLagBytes     = desc("gateway_pg_replication_lag_bytes", "WAL bytes the primary wrote that the standby has not replayed.", "standby")
	descLagSecs      = desc("gateway_pg_replication_replay_lag_seconds", "pg_stat_replication.replay_lag of the standby.", "standby")
	descArchiveAge   = desc("gateway_pg_wal_archive_age_seconds", "Seconds since the last WAL segment was archived (pg_stat_archiver); absent when none ever was.")
	descArchiveFail  = desc("gateway_pg_wal_archive_failures_total", "WAL segments whose archiving failed (pg_stat_archiver.failed_count).")
	descBackupAge    = desc("gateway_backup_age_seconds", "Seconds since the newest pgBackRest backup ended; absent when not configured or none exists.")
	descDelPending   = desc("gateway_callback_backlog", "Callback deliveries not yet delivered (PENDING).")
	descDelRetrying  = desc("gateway_callback_retrying", "Pending callback deliveries of which an attempt has already failed.")
	descDelOldest    = desc("gateway_callback_backlog_oldest_seconds", "Age of the oldest pending callback delivery's retry window; 0 when none.")
	descRemits       = desc("gateway_remittance_backlog", "Remittances not in a final state (SUBMITTED, SCREENING, IN_FLIGHT).")
	descRemitsOldest = desc("gateway_remittance_backlog_oldest_seconds", "Age of the oldest non-final remittance; 0 when none.")
	descHolds        = desc("gateway_hold_backlog", "Authorization holds still open.")
	descHoldsOldest  = desc("gateway_hold_backlog_oldest_seconds", "Age of the oldest open authorization hold; 0 when none.")
)

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descReadAt, descReadErrors, descInRecovery, descStandbys, descSyncStandbys,
		descLagBytes, descLagSecs, descArchiveAge, descArchiveFail, descBackupAge, descDelPending, descDelRetrying,
		descDelOldest, descRemits, descRemitsOldest, descHolds, descHoldsOldest} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: the last reading, with ages
// measured now, so that an age keeps growing while readings fail.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	s, ok, errs := c.state, c.ok, c.errors
	c.mu.Unlock()
	now := c.o.Now()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	age := func(t time.Time) float64 {
		if t.IsZero() {
			return 0
		}
		return max(0, now.Sub(t).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(descReadErrors, prometheus.CounterValue, float64(errs))
	if !ok {
		return
	}
	gauge(descReadAt, float64(s.At.UnixNano())/1e9)
	gauge(descInRecovery, boolFloat(s.InRecovery))
	collectStandbys(ch, s.Standbys, s.InRecovery)
	if !s.ArchivedAt.IsZero() {
		gauge(descArchiveAge, age(s.ArchivedAt))
	}
	ch <- prometheus.MustNewConstMetric(descArchiveFail, prometheus.CounterValue, float64(s.ArchiveFailed))
	if !s.LastBackupStop.IsZero() {
		gauge(descBackupAge, age(s.LastBackupStop))
	}
	gauge(descDelPending, float64(s.DeliveriesPending))
	gauge(descDelRetrying, float64(s.DeliveriesRetrying))
	gauge(descDelOldest, age(s.DeliveriesOldest))
	gauge(descRemits, float64(s.RemitsOpen))
	gauge(descRemitsOldest, age(s.RemitsOldest))
	gauge(descHolds, float64(s.HoldsOpen))
	gauge(descHoldsOldest, age(s.HoldsOldest))
}

// collectStandbys reports pg_stat_replication: per standby its lag, per
// (state, sync_state) how many, and how many stream synchronously. A
// server in recovery has no standbys of its own to report.
func collectStandbys(ch chan<- prometheus.Metric, standbys []Standby, inRecovery bool) {
	if inRecovery {
		return
	}
	counts := map[[2]string]int{}
	sync := 0
	for _, st := range standbys {
		counts[[2]string{st.State, st.SyncState}]++
		if st.State == "streaming" && (st.SyncState == "sync" || st.SyncState == "quorum") {
			sync++
		}
		ch <- prometheus.MustNewConstMetric(descLagBytes, prometheus.GaugeValue, st.LagBytes, st.Name)
		ch <- prometheus.MustNewConstMetric(descLagSecs, prometheus.GaugeValue, st.LagSecs, st.Name)
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(descStandbys, prometheus.GaugeValue, float64(n), k[0], k[1])
	}
	ch <- prometheus.MustNewConstMetric(descSyncStandbys, prometheus.GaugeValue, float64(sync))
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
