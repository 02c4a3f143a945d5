package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver "pgx"

	"github.com/paygate/gateway/internal/pgha"
	"github.com/paygate/gateway/ledger/pgcluster"
)

// targetLayouts are the forms -target accepts: PostgreSQL's timestamp with
// a zone (what `select now()` prints), and RFC 3339.
var targetLayouts = []string{"2006-01-02 15:04:05.999999-07", "2006-01-02 15:04:05.999999Z07:00", time.RFC3339Nano}

func parseTarget(s string) (time.Time, error) {
	for _, l := range targetLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a moment with a time zone, like '2026-11-25 10:00:00+00' or 2026-11-25T10:00:00Z", s)
}

// restoreRecoveryMax bounds the replay of the archived WAL up to the target.
const restoreRecoveryMax = 30 * time.Minute

// restoreSwitchMax bounds the WAL switch and the wait for its segment in
// the repository before a restore.
const restoreSwitchMax = 2 * time.Minute

// restore is `ha restore`: the formation's backups and archived WAL up to a
// moment, into a new embedded cluster of the gateway (DIR/pg), with the
// database's data key (-key, copied to DIR/data.key), checked by `gateway
// audit verify`. GATEWAY_DATA_DIR=DIR then serves it. A restore that fails
// removes what it made, so the same command can be run again.
func restore(ctx context.Context, fs *flag.FlagSet, dir *string, args []string, stdout, stderr io.Writer) (err error) {
	targetFlag := fs.String("target", "", "the moment to restore to, with its time zone: '2026-11-25 10:00:00+00' (required)")
	into := fs.String("into", "", "the gateway data directory to restore into (default ha-restore-<moment> beside -dir); must not hold a cluster")
	set := fs.String("set", "", "the backup to start from (a label of `ha info`); default the newest that ended before the moment")
	keyFlag := fs.String("key", "", "the data key file of the database restored (required; the copy kept beside the backups, or the formation's gateway/data.key)")
	gatewayBin := fs.String("gateway", "bin/gateway", "the gateway binary, for audit verify")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *targetFlag == "" {
		return usageError{"-target is required"}
	}
	target, err := parseTarget(*targetFlag)
	if err != nil {
		return usageError{"-target: " + err.Error()}
	}
	if *keyFlag == "" {
		return usageError{"-key is required: the data key file of the database restored (docs/operations.md, \"The data key\"); " +
			"without it the restored database's sealed secrets do not open and the gateway refuses to start on it"}
	}
	key, err := readKeyFile(*keyFlag)
	if err != nil {
		return err
	}
	f, err := pgha.OpenFormation(*dir)
	if err != nil {
		return err
	}
	repo, err := pgha.OpenRepo(filepath.Join(f.Dir(), "backup"))
	if err != nil {
		return err
	}
	if *into == "" {
		// Beside the formation, not inside it: its directory belongs to the
		// postgres user alone.
		*into = filepath.Join(filepath.Dir(filepath.Clean(*dir)), "ha-restore-"+target.UTC().Format("20060102T150405Z"))
	}
	if err := switchWAL(ctx, f, target, stdout); err != nil {
		return err
	}
	// Everything from here on is removed again on failure (issue 31,
	// finding 3: a failed restore left its directory, and the retry
	// failed on it).
	cleanup, err := claimInto(*into)
	if err != nil {
		return err
	}
	var c *pgcluster.Cluster
	defer func() {
		if c != nil {
			_ = c.Stop()
		}
		if err != nil {
			cleanup()
			fmt.Fprintf(stdout, "ha: restore failed; removed what it made in %s\n", *into)
		}
	}()
	pgDir, err := pgcluster.PrepareDir(filepath.Join(*into, "pg"), stdout)
	if err != nil {
		return err
	}
	cleanup = cleanupAlso(cleanup, pgDir)
	if entries, _ := os.ReadDir(filepath.Join(pgDir, "data")); len(entries) > 0 {
		return fmt.Errorf("%s already holds a cluster; choose another -into", filepath.Join(pgDir, "data"))
	}
	start := time.Now()
	fmt.Fprintf(stdout, "ha: restoring to %s into %s\n", target.UTC().Format(time.RFC3339Nano), *into)
	if err := repo.RestoreToTime(ctx, filepath.Join(pgDir, "data"), target, *set); err != nil {
		return err
	}
	// The restored files carry the formation's synchronous standby name
	// (postgresql.auto.conf): alone, every commit would wait for it. The
	// command line clears it for this start; ALTER SYSTEM below for good.
	if c, err = pgcluster.Start(ctx, pgcluster.Options{Dir: filepath.Join(*into, "pg"), Durable: true,
		Settings: map[string]string{"synchronous_standby_names": ""}, Log: stdout}); err != nil {
		return err
	}
	if err := waitPromoted(ctx, c.URL("postgres"), pgDir); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ha: restored and recovered in %s\n", time.Since(start).Round(time.Millisecond))
	if err := os.WriteFile(filepath.Join(*into, "data.key"), key, 0o600); err != nil {
		return err
	}
	if err := auditVerify(ctx, *gatewayBin, c.URL("gateway"), *into, *keyFlag, stdout, stderr); err != nil {
		return err
	}
	// Last: the mark of a finished, verified restore, which `ha run
	// -from-restore` requires.
	if err := writeRestoreRecord(*into, restoreRecord{Target: target.UTC(), Set: *set, Formation: f.Dir(), Verified: time.Now().UTC()}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ha: serve it with: GATEWAY_DATA_DIR=%s %s serve\n", *into, *gatewayBin)
	fmt.Fprintf(stdout, "ha: or make it a new HA formation: ha run -dir NEWDIR -from-restore %s\n", *into)
	return nil
}

// waitPromoted waits until the restored server has replayed up to the
// target and ended recovery (recovery_target_action = promote), then makes
// it forget the formation's synchronous standby.
func waitPromoted(ctx context.Context, url, pgDir string) error {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, restoreRecoveryMax)
	defer cancel()
	for {
		var inRecovery bool
		err := db.QueryRowContext(ctx, "select pg_is_in_recovery()").Scan(&inRecovery)
		if err == nil && !inRecovery {
			break
		}
		// A recovery that fails ("recovery ended before configured
		// recovery target was reached") shuts the server down: say why
		// at once rather than poll it for half an hour.
		if _, serr := os.Stat(filepath.Join(pgDir, "data", "postmaster.pid")); errors.Is(serr, os.ErrNotExist) {
			return fmt.Errorf("the restored server stopped during recovery; the end of %s:\n%s",
				filepath.Join(pgDir, "postgres.log"), tail(filepath.Join(pgDir, "postgres.log"), 8))
		}
		select {
		case <-ctx.Done():
			return errors.Join(errors.New("the restored server did not finish recovery"), err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	for _, q := range []string{"alter system reset synchronous_standby_names", "select pg_reload_conf()"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// tail is the last n lines of a file, for an error message.
func tail(path string, n int) string {
	b, _ := os.ReadFile(path) //nolint:gosec // the restored server's own log
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
