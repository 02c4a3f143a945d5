package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/paygate/gateway/internal/pgha"
)

// The backup schedule of `ha run` (issue 31, point 4; docs/operations.md,
// "Backups"): a backup every -backup-every (default a day), a full one when
// the newest full is fullEvery backups' intervals old, a differential one
// (the changes since that full) otherwise; the first at once when the
// repository holds none. The repository's retention (two fulls) removes
// what falls out. On three machines the systemd timers of deploy/systemd
// do the same (pgbackrest-full.timer weekly, pgbackrest-diff.timer daily).
// The gateway's internal /metrics shows the newest backup's age
// (gateway_backup_age_seconds; ha run gives it GATEWAY_BACKUP_REPO), which
// is what pages when the schedule stops working.

// fullEvery is how many intervals a full backup serves before the next.
const fullEvery = 7

// scheduleRetry is the wait after a failed look at the repository or a
// failed backup: soon enough to recover from a failover in the middle of
// one, not a loop.
const scheduleRetry = time.Minute

// nextBackup is the kind of the next backup and how long until it is due,
// given the repository's backups (oldest first), now and the interval.
func nextBackup(backups []pgha.BackupInfo, now time.Time, every time.Duration) (string, time.Duration) {
	var newest, newestFull time.Time
	for _, b := range backups {
		if b.Stop.After(newest) {
			newest = b.Stop
		}
		if b.Type == "full" && b.Stop.After(newestFull) {
			newestFull = b.Stop
		}
	}
	if newestFull.IsZero() {
		return "full", 0
	}
	fullDue, nextDue := newestFull.Add(fullEvery*every), newest.Add(every)
	if !fullDue.After(nextDue) {
		return "full", max(0, fullDue.Sub(now))
	}
	return "diff", max(0, nextDue.Sub(now))
}

// scheduleBackups takes the backups nextBackup says, until ctx ends.
func scheduleBackups(ctx context.Context, repo *pgha.Repo, every time.Duration, log io.Writer) {
	for {
		backups, err := repo.Backups(ctx)
		if err != nil {
			fmt.Fprintf(log, "ha: backup schedule: reading the repository (next try in %s): %v\n", scheduleRetry, err)
			if !sleep(ctx, scheduleRetry) {
				return
			}
			continue
		}
		kind, wait := nextBackup(backups, time.Now(), every)
		if !sleep(ctx, wait) {
			return
		}
		start := time.Now()
		if err := repo.Backup(ctx, kind); err != nil {
			if ctx.Err() != nil {
				return
			}
			fmt.Fprintf(log, "ha: scheduled %s backup failed (next try in %s): %v\n", kind, scheduleRetry, err)
			if !sleep(ctx, scheduleRetry) {
				return
			}
			continue
		}
		fmt.Fprintf(log, "ha: scheduled %s backup done in %s\n", kind, time.Since(start).Round(time.Millisecond))
	}
}

// sleep waits d, reporting false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
