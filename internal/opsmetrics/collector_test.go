package opsmetrics_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/opsmetrics"
	"github.com/paygate/gateway/ledger/pgtest"
)

// value is the one sample of name that c reports (with labels), -1 when
// absent; read through a registry, as a scrape would.
func value(t *testing.T, c prometheus.Collector, name string, labels ...string) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.Metric {
			for i := 0; i+1 < len(labels); i += 2 {
				ok := false
				for _, l := range m.Label {
					ok = ok || l.GetName() == labels[i] && l.GetValue() == labels[i+1]
				}
				if !ok {
					continue metrics
				}
			}
			if m.Gauge != nil {
				return m.Gauge.GetValue()
			}
			return m.Counter.GetValue()
		}
	}
	return -1
}

// The database's state on a lone primary: writable, no standby (so no
// synchronous one), nothing archived, no backlog; then a remittance not
// yet final moves the remittance backlog and its oldest age, and a backup
// found by LastBackup appears with its age.
func TestCollectorReportsTheDatabase(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDB(t)
	g := gatewaytest.New(t, db, gatewaytest.Options{})
	now := time.Now()
	backup := time.Time{}
	c := opsmetrics.NewCollector(opsmetrics.Options{DB: db.DB, Interval: time.Hour, Now: func() time.Time { return now },
		Backlogs:   opsmetrics.Backlogs{Deliveries: g.Deliveries.Backlog, Remittances: g.Remit.Backlog, Holds: g.Network.HoldBacklog},
		LastBackup: func(context.Context) (time.Time, error) { return backup, nil }})
	c.Refresh()
	for _, tc := range []struct {
		name string
		want float64
	}{
		{"gateway_pg_in_recovery", 0},
		{"gateway_pg_sync_standbys", 0},
		{"gateway_pg_wal_archive_age_seconds", -1}, // never archived: absent
		{"gateway_backup_age_seconds", -1},         // none: absent
		{"gateway_remittance_backlog", 0},
		{"gateway_remittance_backlog_oldest_seconds", 0},
		{"gateway_callback_backlog", 0},
		{"gateway_callback_backlog_oldest_seconds", 0},
		{"gateway_hold_backlog", 0},
		{"gateway_db_state_read_errors_total", 0},
	} {
		if got := value(t, c, tc.name); got != tc.want {
			t.Errorf("before: %s = %v, want %v", tc.name, got, tc.want)
		}
	}

	m := gatewaytest.Merchant(t, g, "USD")
	created := now.Add(-90 * time.Second)
	if _, err := db.DB.Exec(`insert into remittances (tx_id, merchant_id, payer_id, beneficiary, amount, fee, currency, rail,
		status, next_action_at, created_at, updated_at) values ('rmt_aaaaaaaaaaaaaaaaaaaa', $1, 'p', '{}', 100, 0, 'USD', 'SEPA',
		'SCREENING', $2, $2, $2)`, m.ID, created); err != nil {
		t.Fatal(err)
	}
	backup = now.Add(-2 * time.Hour)
	c.Refresh()
	if got := value(t, c, "gateway_remittance_backlog"); got != 1 {
		t.Errorf("gateway_remittance_backlog = %v, want 1", got)
	}
	if got := value(t, c, "gateway_remittance_backlog_oldest_seconds"); got < 89 || got > 91 {
		t.Errorf("gateway_remittance_backlog_oldest_seconds = %v, want 90", got)
	}
	if got := value(t, c, "gateway_backup_age_seconds"); got != 7200 {
		t.Errorf("gateway_backup_age_seconds = %v, want 7200", got)
	}
	// The age grows with the clock between readings (a stalled reader
	// shows as ever older data, not as fresh).
	now = now.Add(time.Minute)
	if got := value(t, c, "gateway_backup_age_seconds"); got != 7260 {
		t.Errorf("gateway_backup_age_seconds a minute later = %v, want 7260", got)
	}
}

// A reading that fails is counted, and the last good one stays.
func TestCollectorCountsFailedReadings(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDB(t)
	c := opsmetrics.NewCollector(opsmetrics.Options{DB: db.DB, Interval: time.Hour,
		LastBackup: func(context.Context) (time.Time, error) { return time.Time{}, errors.New("no repository") }})
	c.Refresh()
	if got := value(t, c, "gateway_db_state_read_errors_total"); got != 1 {
		t.Errorf("read errors %v, want 1", got)
	}
	db.DB.Close()
	c.Refresh()
	if got := value(t, c, "gateway_db_state_read_errors_total"); got != 2 {
		t.Errorf("read errors %v, want 2", got)
	}
	if got := value(t, c, "gateway_pg_in_recovery"); got != 0 {
		t.Errorf("the last good reading is gone: in_recovery %v", got)
	}
}

// The workers' health and the Watch's view, as the functions give them at
// the scrape.
func TestWorkersAndDatabaseCollectors(t *testing.T) {
	t.Parallel()
	ok := time.Unix(1_700_000_000, 0)
	ws := []opsmetrics.Worker{{Name: "callbacks", Running: true, Steps: 5, Failures: 2, LastOK: ok, Failing: true}}
	w := opsmetrics.Workers(func() []opsmetrics.Worker { return ws })
	for name, want := range map[string]float64{"gateway_worker_last_success_timestamp_seconds": 1_700_000_000,
		"gateway_worker_failing": 1, "gateway_worker_failures_total": 2, "gateway_worker_steps_total": 5, "gateway_worker_running": 1} {
		if got := value(t, w, name, "worker", "callbacks"); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	ws[0].Failing, ws[0].Failures = false, 3
	if got := value(t, w, "gateway_worker_failing", "worker", "callbacks"); got != 0 {
		t.Errorf("gateway_worker_failing after a success = %v", got)
	}
	writable, changes := true, int64(0)
	cs := opsmetrics.Database(func() bool { return writable }, func() int64 { return changes })
	if value(t, cs[0], "gateway_database_writable") != 1 || value(t, cs[1], "gateway_database_failovers_total") != 0 {
		t.Error("before: want writable, no failover")
	}
	writable, changes = false, 1
	if value(t, cs[0], "gateway_database_writable") != 0 || value(t, cs[1], "gateway_database_failovers_total") != 1 {
		t.Error("after: want not writable, one failover")
	}
}
