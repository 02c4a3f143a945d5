package opsmetrics

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Standby is one row of pg_stat_replication on the primary.
type Standby struct {
	Name      string  // application_name: the node's name
	State     string  // streaming, catchup, startup, backup, stopping
	SyncState string  // sync, quorum, potential, async
	LagBytes  float64 // WAL the primary wrote that the standby has not replayed
	LagSecs   float64 // replay_lag (0 when the standby has caught up and the primary is idle)
}

// State is one reading of the database: what the collector reports until
// the next one.
type State struct {
	At         time.Time // when it was read
	InRecovery bool      // the server the gateway writes to is in recovery (no writer)
	Standbys   []Standby // on a primary; none on a lone server or a standby

	// The WAL archive (pg_stat_archiver): when the last segment was
	// archived (zero: never, or archive_mode off) and how many failed.
	ArchivedAt     time.Time
	ArchiveFailed  int64
	LastBackupStop time.Time // the newest backup's end (zero: not configured or none)

	DeliveriesPending  int64     // callbacks not yet delivered (PENDING)
	DeliveriesRetrying int64     // of which an attempt has already failed
	DeliveriesOldest   time.Time // the oldest pending one's window start (zero: none)
	RemitsOpen         int64     // remittances not final
	RemitsOldest       time.Time
	HoldsOpen          int64 // authorization holds still open
	HoldsOldest        time.Time
}

// Each reading is a few aggregates over partial indexes (deliveries_due_idx,
// remittances_due_idx, authorizations_expiry_idx) and the server's own
// views; it runs once per interval whatever the number of scrapes.
const (
	recoveryQuery    = `select pg_is_in_recovery()`
	replicationQuery = `select coalesce(application_name, ''), coalesce(state, ''), coalesce(sync_state, ''),
	coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn), 0)::float8,
	coalesce(extract(epoch from replay_lag), 0)::float8
	from pg_stat_replication order by application_name`
	archiverQuery = `select last_archived_time, failed_count from pg_stat_archiver`
)

// Backlogs are the domains' counts of work not yet done, each read by the
// package that owns the table (one owner per table: docs/architecture.md);
// a nil one is not read.
type Backlogs struct {
	Deliveries  func(context.Context) (pending, retrying int64, oldest time.Time, err error) // delivery.Store.Backlog
	Remittances func(context.Context) (open int64, oldest time.Time, err error)              // remittance.Service.Backlog
	Holds       func(context.Context) (open int64, oldest time.Time, err error)              // network.Service.HoldBacklog
}

// Read reads the server's state from db (the gateway's primary pool) and
// the backlogs from their owners. lastBackup,
// when not nil, gives the newest backup's end (pgBackRest); its failure
// is reported but does not spoil the rest.
func Read(ctx context.Context, db *sql.DB, backlogs Backlogs, lastBackup func(context.Context) (time.Time, error)) (State, error) {
	s := State{At: time.Now()}
	var errs []error
	if err := db.QueryRowContext(ctx, recoveryQuery).Scan(&s.InRecovery); err != nil {
		return State{}, fmt.Errorf("opsmetrics: recovery: %w", err) // nothing read: a zero At
	}
	if !s.InRecovery {
		if err := s.readStandbys(ctx, db); err != nil {
			errs = append(errs, err)
		}
	}
	var archived sql.NullTime
	if err := db.QueryRowContext(ctx, archiverQuery).Scan(&archived, &s.ArchiveFailed); err != nil {
		errs = append(errs, fmt.Errorf("opsmetrics: archiver: %w", err))
	}
	s.ArchivedAt = archived.Time
	errs = append(errs, s.readBacklogs(ctx, backlogs)...)
	if lastBackup != nil {
		t, err := lastBackup(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("opsmetrics: last backup: %w", err))
		}
		s.LastBackupStop = t
	}
	return s, errors.Join(errs...)
}

func (s *State) readStandbys(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, replicationQuery)
	if err != nil {
		return fmt.Errorf("opsmetrics: replication: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var st Standby
		if err := rows.Scan(&st.Name, &st.State, &st.SyncState, &st.LagBytes, &st.LagSecs); err != nil {
			return fmt.Errorf("opsmetrics: replication: %w", err)
		}
		s.Standbys = append(s.Standbys, st)
	}
	return rows.Err()
}

// readBacklogs asks each owner for its backlog; a failed one is reported
// and leaves its figures at zero.
func (s *State) readBacklogs(ctx context.Context, b Backlogs) []error {
	var errs []error
	note := func(what string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("opsmetrics: %s backlog: %w", what, err))
		}
	}
	if b.Deliveries != nil {
		var err error
		s.DeliveriesPending, s.DeliveriesRetrying, s.DeliveriesOldest, err = b.Deliveries(ctx)
		note("callback", err)
	}
	if b.Remittances != nil {
		var err error
		s.RemitsOpen, s.RemitsOldest, err = b.Remittances(ctx)
		note("remittance", err)
	}
	if b.Holds != nil {
		var err error
		s.HoldsOpen, s.HoldsOldest, err = b.Holds(ctx)
		note("hold", err)
	}
	return errs
}
