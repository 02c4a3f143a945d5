package pgha

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/paygate/gateway/ledger/pgcluster"
)

// Backups and point-in-time recovery with pgBackRest (Debian's pgbackrest):
// full backups of the primary into a repository, every WAL segment archived
// into the same repository as PostgreSQL completes it (archive_command),
// and a restore of a backup plus the archived WAL up to a chosen moment into
// a fresh data directory. docs/operations.md says how an operator uses it.

// PGServer is one PostgreSQL server of a stanza, on this machine.
type PGServer struct {
	DataDir    string
	Port       int
	SocketPath string // the directory of its unix socket
}

// Repo is a pgBackRest repository on this machine with one stanza (the
// backups of one cluster: its primary and standbys).
type Repo struct {
	dir       string
	conf      string
	stanza    string
	encrypted bool // backup_cipher.go
}

// Stanza is the stanza name the gateway's setups use.
const Stanza = "gateway"

// pgbackrestPath is where Debian installs pgbackrest; PATH is tried first.
const pgbackrestPath = "/usr/bin/pgbackrest"

// FindPgBackRest returns the pgbackrest program, or an error saying how to
// install it.
func FindPgBackRest() (string, error) {
	if p, err := exec.LookPath("pgbackrest"); err == nil {
		return p, nil
	}
	if st, err := os.Stat(pgbackrestPath); err == nil && st.Mode()&0o111 != 0 {
		return pgbackrestPath, nil
	}
	return "", errors.New("pgha: pgbackrest is not installed; `make pg-ha` installs Debian's pgbackrest")
}

// NewRepo makes a repository in dir (dir/repo holds the backups and the WAL
// archive, dir/log and dir/lock pgBackRest's own files) and writes its
// configuration for the servers of one cluster: Configure names them.
func NewRepo(dir string, servers []PGServer) (*Repo, error) {
	if _, err := FindPgBackRest(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	r := &Repo{dir: abs, conf: filepath.Join(abs, "pgbackrest.conf"), stanza: Stanza}
	r.decideEncryption()
	for _, d := range []string{abs, filepath.Join(abs, "repo"), filepath.Join(abs, "log"), filepath.Join(abs, "lock")} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return nil, fmt.Errorf("pgha: %w", err)
		}
		if err := pgcluster.Chown(d); err != nil {
			return nil, fmt.Errorf("pgha: %w", err)
		}
	}
	if err := r.ensurePassphrase(); err != nil {
		return nil, err
	}
	if err := r.Configure(servers); err != nil {
		return nil, err
	}
	return r, nil
}

// Configure (re)writes the repository's configuration for the servers of
// one cluster. Several servers (a primary and its standby) share the
// stanza: pgBackRest backs up whichever is the primary.
func (r *Repo) Configure(servers []PGServer) error {
	abs := r.dir
	var b strings.Builder
	b.WriteString("# Written by internal/pgha (NewRepo); docs/operations.md explains it.\n[global]\n")
	fmt.Fprintf(&b, "repo1-path=%s\n", filepath.Join(abs, "repo"))
	// Two full backups are kept, and the WAL needed to restore from the
	// older one: restores can reach back to the start of the older one.
	b.WriteString("repo1-retention-full=2\n")
	if r.encrypted {
		// The passphrase is in CipherFile, read with --config-include-path.
		fmt.Fprintf(&b, "repo1-cipher-type=%s\n", cipherType)
	}
	fmt.Fprintf(&b, "log-path=%s\n", filepath.Join(abs, "log"))
	fmt.Fprintf(&b, "lock-path=%s\n", filepath.Join(abs, "lock"))
	// A backup starts with an immediate checkpoint, not a spread one that
	// can make it wait minutes on an idle server.
	b.WriteString("start-fast=y\n")
	// lz4 costs a fraction of gzip's CPU (the default) for a somewhat
	// larger repository: a full backup took 5.4 s to copy with gzip on
	// this 2-core machine.
	b.WriteString("compress-type=lz4\n")
	b.WriteString("log-level-console=warn\nlog-level-file=info\n")
	// Every file of a backup is checksummed and checked at restore.
	fmt.Fprintf(&b, "\n[%s]\n", r.stanza)
	for i, s := range servers {
		fmt.Fprintf(&b, "pg%d-path=%s\npg%d-port=%d\n", i+1, s.DataDir, i+1, s.Port)
		if s.SocketPath != "" {
			fmt.Fprintf(&b, "pg%d-socket-path=%s\n", i+1, s.SocketPath)
		}
	}
	if err := os.WriteFile(r.conf, []byte(b.String()), 0o640); err != nil { //nolint:gosec // read by the postgres user, holds no secret
		return fmt.Errorf("pgha: %w", err)
	}
	if err := pgcluster.Chown(r.conf); err != nil {
		return fmt.Errorf("pgha: %w", err)
	}
	return nil
}

// OpenRepo opens a repository NewRepo configured in dir.
func OpenRepo(dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	r := &Repo{dir: abs, conf: filepath.Join(abs, "pgbackrest.conf"), stanza: Stanza}
	if _, err := os.Stat(r.conf); err != nil {
		return nil, fmt.Errorf("pgha: no pgBackRest repository in %s: %w", abs, err)
	}
	r.readEncryption()
	return r, nil
}

// Config is the repository's configuration file.
func (r *Repo) Config() string { return r.conf }

// ArchiveSettings are the server settings that archive every completed WAL
// segment into the repository. They are the same on every node of a
// cluster: archive-push reads the server's data directory from the
// directory PostgreSQL runs the command in (its own), so one line serves a
// primary and, after a failover, its promoted standby.
func (r *Repo) ArchiveSettings() map[string]string {
	config := "--config=" + r.conf
	if r.encrypted {
		config += " --config-include-path=" + r.cipherDir()
	}
	return map[string]string{
		"archive_mode": "on",
		"archive_command": fmt.Sprintf(`pgbackrest %s --stanza=%s --pg1-path="$(pwd)" archive-push %%p`,
			config, r.stanza),
		// A segment is archived at the latest this long after a commit
		// when writes are few: the most recent commits a restore can
		// lose when the primary's disk is lost too.
		"archive_timeout": "60s",
	}
}

// command prepares a pgbackrest run as the server's user.
func (r *Repo) command(ctx context.Context, args ...string) (*exec.Cmd, error) {
	bin, err := FindPgBackRest()
	if err != nil {
		return nil, err
	}
	config, err := r.configArgs()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, append(append(config, "--stanza="+r.stanza), args...)...) //nolint:gosec // our own arguments
	if err := pgcluster.AsServerUser(cmd); err != nil {
		return nil, err
	}
	return cmd, nil
}

// Run runs pgbackrest with args (a command and its options) and returns
// what it printed.
func (r *Repo) Run(ctx context.Context, args ...string) (string, error) {
	cmd, err := r.command(ctx, args...)
	if err != nil {
		return "", err
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("pgha: pgbackrest %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// Init creates the stanza (once) and checks that the primary archives into
// it: `pgbackrest check` forces a WAL switch and waits for the segment to
// reach the repository.
func (r *Repo) Init(ctx context.Context) error {
	if _, err := r.Run(ctx, "stanza-create"); err != nil {
		return err
	}
	_, err := r.Run(ctx, "check")
	return err
}

// Backup takes a backup of the primary: kind is "full", "diff" or "incr".
func (r *Repo) Backup(ctx context.Context, kind string) error {
	switch kind {
	case "full", "diff", "incr":
	default:
		return fmt.Errorf("pgha: backup type %q: want full, diff or incr", kind)
	}
	_, err := r.Run(ctx, "backup", "--type="+kind)
	return err
}

// Info is pgbackrest info: the backups, their times and sizes, and the
// range of archived WAL.
func (r *Repo) Info(ctx context.Context) (string, error) {
	return r.Run(ctx, "info")
}

// BackupInfo is one backup of the repository.
type BackupInfo struct {
	Label string    // 20261125-044807F: pgBackRest's name, given to --set
	Type  string    // full, diff, incr
	Start time.Time // to the second
	Stop  time.Time
	Bytes int64 // the database size it copied
}

// Backups lists the repository's backups, oldest first
// (pgbackrest info --output=json).
func (r *Repo) Backups(ctx context.Context) ([]BackupInfo, error) {
	out, err := r.Run(ctx, "info", "--output=json")
	if err != nil {
		return nil, err
	}
	var stanzas []struct {
		Backup []struct {
			Label     string `json:"label"`
			Type      string `json:"type"`
			Timestamp struct {
				Start int64 `json:"start"`
				Stop  int64 `json:"stop"`
			} `json:"timestamp"`
			Info struct {
				Size int64 `json:"size"`
			} `json:"info"`
		} `json:"backup"`
	}
	if err := json.Unmarshal([]byte(out), &stanzas); err != nil {
		return nil, fmt.Errorf("pgha: pgbackrest info: %w", err)
	}
	var list []BackupInfo
	for _, st := range stanzas {
		for _, b := range st.Backup {
			list = append(list, BackupInfo{Label: b.Label, Type: b.Type,
				Start: time.Unix(b.Timestamp.Start, 0).UTC(), Stop: time.Unix(b.Timestamp.Stop, 0).UTC(), Bytes: b.Info.Size})
		}
	}
	return list, nil
}

// RestoreToTime restores into pgdata (which must not exist or be empty) a
// backup — set, or without it the newest that ended before target — with
// recovery settings that replay the archived WAL up to target and then end
// recovery (promote): started, the server holds exactly what was committed
// up to target. It runs on pgdata's own (a fresh cluster's) settings; the
// caller starts it. pgBackRest knows a backup's end to the second only: for
// a target within a second of a backup's end, name the set.
func (r *Repo) RestoreToTime(ctx context.Context, pgdata string, target time.Time, set string) error {
	if err := os.MkdirAll(pgdata, 0o700); err != nil {
		return fmt.Errorf("pgha: %w", err)
	}
	if err := pgcluster.Chown(pgdata); err != nil {
		return fmt.Errorf("pgha: %w", err)
	}
	// pgBackRest hands the target to PostgreSQL's recovery_target_time,
	// which reads a timestamp with a zone; microseconds keep the moment
	// exact.
	args := []string{"restore", "--pg1-path=" + pgdata, "--type=time",
		"--target=" + target.UTC().Format("2006-01-02 15:04:05.999999") + "+00",
		"--target-action=promote", "--archive-mode=off"}
	if set != "" {
		args = append(args, "--set="+set)
	}
	_, err := r.Run(ctx, args...)
	return err
}

// SwitchAndArchive makes the server at url close its current WAL segment
// and waits until the archiver has copied it into the repository, so that
// everything committed so far is in the archive: a restore to a moment needs
// a WAL record after that moment there.
func SwitchAndArchive(ctx context.Context, url string) error {
	_, err := SwitchAndArchiveAt(ctx, url)
	return err
}

// UnreachableError is a server that did not answer at all (as opposed to
// one that answered and failed).
type UnreachableError struct{ Err error }

func (e *UnreachableError) Error() string { return "no server answered: " + e.Err.Error() }
func (e *UnreachableError) Unwrap() error { return e.Err }

// unreachableMax bounds the first answer of SwitchAndArchiveAt's server.
const unreachableMax = 10 * time.Second

// SwitchAndArchiveAt is SwitchAndArchive, returning the server's clock at
// the switch: every moment up to it is in the archive once it returns. A
// server that does not answer within unreachableMax is an
// *UnreachableError.
func SwitchAndArchiveAt(ctx context.Context, url string) (time.Time, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return time.Time{}, err
	}
	defer db.Close()
	pctx, cancel := context.WithTimeout(ctx, unreachableMax)
	err = db.PingContext(pctx)
	cancel()
	if err != nil {
		return time.Time{}, &UnreachableError{Err: err}
	}
	// Recovery to a moment stops at the first commit after it, and fails
	// when the archive holds none: a transaction that takes an xid commits
	// a record stamped after its own now(), so every moment up to that
	// now() is reachable even on an idle database.
	// (txid_current() must be in the select list: in a subquery whose
	// column nothing reads, the planner drops it and no xid is taken.)
	var now time.Time
	var xid int64
	if err := db.QueryRowContext(ctx, "select txid_current(), now()").Scan(&xid, &now); err != nil {
		return time.Time{}, fmt.Errorf("pgha: marking the present in the WAL: %w", err)
	}
	var seg string
	if err := db.QueryRowContext(ctx, "select pg_walfile_name(pg_switch_wal())").Scan(&seg); err != nil {
		return time.Time{}, fmt.Errorf("pgha: switching WAL: %w", err)
	}
	if err := waitFor(ctx, db, "select coalesce(last_archived_wal >= $1, false) from pg_stat_archiver", seg); err != nil {
		var failed sql.NullString
		_ = db.QueryRowContext(context.Background(), "select last_failed_wal from pg_stat_archiver").Scan(&failed)
		return time.Time{}, fmt.Errorf("pgha: WAL segment %s was not archived (last failed: %s): %w", seg, failed.String, err)
	}
	return now, nil
}
