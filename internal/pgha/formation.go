package pgha

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/gateway/ledger/pgcluster"
)

// A pg_auto_failover formation on this machine: a monitor and two data
// nodes, each a `pg_autoctl run` (the keeper) with its PostgreSQL, on
// 127.0.0.1 only, with its own port and data directory. The monitor checks
// the nodes' health and assigns their states; when the primary is lost it
// promotes the standby, and a node that comes back rejoins as a standby
// (pg_rewind). docs/ha.md describes it and what the gateway does in each
// failure.

// FormationOptions configure a formation.
type FormationOptions struct {
	// Dir holds everything: the monitor's and the nodes' data directories,
	// pg_autoctl's configuration and state, the keepers' logs, and
	// formation.json (the ports, so that a restart finds the same ones).
	Dir string
	// Ports are the monitor's, then each node's; nil picks free ones.
	// Ignored when the formation exists already (formation.json).
	Ports []int
	// DataNodes is 2 (the default) or 3 (formation_nodes.go); with
	// Ports set, len(Ports)-1. Ignored when the formation exists.
	DataNodes int
	// DBName is the database the nodes are created with; default gateway.
	DBName string
	// Timings are the monitor's failure-detection settings; the zero
	// value is TunedTimings.
	Timings *Timings
	// Repo, when set, archives every node's WAL into it (pgBackRest).
	Repo *Repo
	// Seed, when set, is the data directory of a stopped, promoted
	// cluster (a verified restore) that the first node is a copy of
	// (formation_seed.go); a formation that exists already is refused.
	Seed string
	// Log receives progress lines meant for a person.
	Log io.Writer
}

// Timings are the monitor's GUCs that decide how fast a lost node is
// noticed and replaced (all in milliseconds; man pg_auto_failover).
type Timings struct {
	HealthCheckPeriod             int
	HealthCheckTimeout            int
	HealthCheckRetryDelay         int
	HealthCheckMaxRetries         int
	NodeConsideredUnhealthyTimout int
	PrimaryDemoteTimeout          int
}

// TunedTimings detected a killed primary and promoted its standby in 8.3 s
// on this machine, against 50.6 s with pg_auto_failover's defaults
// (/work/shared/research/ha.md §1.3, docs/ha.md). primary_demote_timeout is
// how long the monitor waits for a primary it cannot reach to stop by
// itself before promoting another: below the keeper's own
// network_partition_timeout (20 s) an isolated old primary may still run
// when the standby is promoted; with synchronous replication it cannot
// acknowledge a commit then (docs/ha.md, "Network partition").
var TunedTimings = Timings{
	HealthCheckPeriod:             1000,
	HealthCheckTimeout:            1000,
	HealthCheckRetryDelay:         500,
	HealthCheckMaxRetries:         1,
	NodeConsideredUnhealthyTimout: 3000,
	PrimaryDemoteTimeout:          5000,
}

// Keeper is one `pg_autoctl run`: the monitor or a data node, with the
// PostgreSQL it starts.
type Keeper struct {
	Name   string
	Port   int
	PGData string
	log    string
	cmd    *exec.Cmd
	exited chan struct{}
}

// Running reports whether the keeper this process started still runs.
func (k *Keeper) Running() bool {
	if k.cmd == nil {
		return false
	}
	select {
	case <-k.exited:
		return false
	default:
		return true
	}
}

// Formation is a running monitor and its data nodes.
type Formation struct {
	opts    FormationOptions
	dir     string
	pgctl   string
	autoctl string
	Monitor *Keeper
	Nodes   []*Keeper
	tls     bool // formation_tls.go
	scram   bool // formation_auth.go
}

// formationFile records a formation's ports and database.
type formationFile struct {
	MonitorPort int    `json:"monitorPort"`
	NodePorts   []int  `json:"nodePorts"`
	DBName      string `json:"dbName"`
	// TLS: the servers were created with the formation's certificates
	// (formation_tls.go); false for a formation made before.
	TLS bool `json:"tls,omitempty"`
	// Scram: the servers take passwords, by scram-sha-256, over TLS only
	// (formation_auth.go); false for a formation made before, which keeps
	// pg_autoctl's trust.
	Scram bool `json:"scram,omitempty"`
}

// pgAutoctlPath is where Debian's pg-auto-failover-cli installs pg_autoctl.
const pgAutoctlPath = "/usr/bin/pg_autoctl"

// FindPgAutoctl returns the pg_autoctl program, or an error saying how to
// install it.
func FindPgAutoctl() (string, error) {
	if p, err := exec.LookPath("pg_autoctl"); err == nil {
		return p, nil
	}
	if st, err := os.Stat(pgAutoctlPath); err == nil && st.Mode()&0o111 != 0 {
		return pgAutoctlPath, nil
	}
	return "", errors.New("pgha: pg_autoctl is not installed; `make pg-ha` installs Debian's " +
		"pg-auto-failover-cli and postgresql-<version>-auto-failover")
}

// Waits of a formation's start: each bounds a broken setup.
const (
	monitorStartMax = 2 * time.Minute
	nodeStartMax    = 3 * time.Minute
	keeperStopMax   = 60 * time.Second
	// checkpointNudge: a new standby's pg_basebackup (run by pg_autoctl
	// without --checkpoint=fast) waits for the primary's next spread
	// checkpoint, 70 s once on an idle primary; a CHECKPOINT on the
	// primary ends the wait (ha.md §1.1).
	checkpointNudge = 2 * time.Second
)

// StartFormation starts the formation in opts.Dir, creating it the first
// time (monitor, then a primary, then a standby cloned from it) and running
// the existing one after that. It returns once a node is primary and the
// other its synchronous standby.
func StartFormation(ctx context.Context, opts FormationOptions) (*Formation, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.DBName == "" {
		opts.DBName = "gateway"
	}
	if opts.Timings == nil {
		t := TunedTimings
		opts.Timings = &t
	}
	autoctl, err := FindPgAutoctl()
	if err != nil {
		return nil, err
	}
	bin, err := pgcluster.FindBinaries()
	if err != nil {
		return nil, err
	}
	// PrepareDir makes dir the postgres user's (or a reachable stand-in);
	// the servers' data directories go under its data/, pg_autoctl's
	// runtime files under its run/.
	dir, err := pgcluster.PrepareDir(opts.Dir, opts.Log)
	if err != nil {
		return nil, err
	}
	f := &Formation{opts: opts, dir: dir, pgctl: bin.Program("pg_ctl"), autoctl: autoctl}
	if opts.Seed != "" && exists(filepath.Join(dir, "formation.json")) {
		return nil, fmt.Errorf("pgha: %s already holds a formation: a formation from a restore is made in a new directory", opts.Dir)
	}
	ff, err := f.loadOrPickPorts()
	if err != nil {
		return nil, err
	}
	f.opts.DBName, f.tls, f.scram = ff.DBName, ff.TLS, ff.Scram
	f.Monitor = f.keeper("monitor", ff.MonitorPort)
	for i, p := range ff.NodePorts {
		f.Nodes = append(f.Nodes, f.keeper("node"+strconv.Itoa(i+1), p))
	}
	if err := f.ensureSocketDir(); err != nil {
		return nil, err
	}
	if err := f.ensureAuthFiles(); err != nil {
		return nil, err
	}
	if opts.Repo != nil {
		var servers []PGServer
		for _, n := range f.Nodes {
			servers = append(servers, PGServer{DataDir: n.PGData, Port: n.Port, SocketPath: socketDir})
		}
		if err := opts.Repo.Configure(servers); err != nil {
			return nil, err
		}
	}
	created := !exists(filepath.Join(f.Nodes[0].PGData, "PG_VERSION"))
	if err := f.startMonitor(ctx); err != nil {
		f.Stop()
		return nil, err
	}
	for i, n := range f.Nodes {
		if err := f.startNode(ctx, n, i == 0); err != nil {
			f.Stop()
			return nil, err
		}
	}
	if err := f.requireSyncStandby(ctx); err != nil {
		f.Stop()
		return nil, err
	}
	if created && opts.Repo != nil {
		// The stanza, once both nodes run: pgBackRest checks every
		// server it is configured with.
		fmt.Fprintf(f.opts.Log, "pgha: creating the pgBackRest stanza %q in %s\n", Stanza, opts.Repo.dir)
		if err := opts.Repo.Init(ctx); err != nil {
			f.Stop()
			return nil, err
		}
	}
	return f, nil
}

// OpenFormation opens the formation StartFormation made in dir without
// starting anything, for commands that read its state or act on it while
// another process runs it (pg_autoctl perform failover, backups).
func OpenFormation(dir string) (*Formation, error) {
	autoctl, err := FindPgAutoctl()
	if err != nil {
		return nil, err
	}
	bin, err := pgcluster.FindBinaries()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if target, err := os.Readlink(filepath.Join(abs, "cluster")); err == nil {
		abs = target // PrepareDir's stand-in for a directory postgres cannot reach
	}
	f := &Formation{opts: FormationOptions{Dir: dir, Log: io.Discard}, dir: abs, pgctl: bin.Program("pg_ctl"), autoctl: autoctl}
	b, err := os.ReadFile(filepath.Join(abs, "formation.json")) //nolint:gosec // our own file
	if err != nil {
		return nil, fmt.Errorf("pgha: no formation in %s (make run-ha creates one): %w", dir, err)
	}
	var ff formationFile
	if err := json.Unmarshal(b, &ff); err != nil {
		return nil, fmt.Errorf("pgha: %s/formation.json: %w", dir, err)
	}
	f.opts.DBName, f.tls, f.scram = ff.DBName, ff.TLS, ff.Scram
	f.Monitor = f.keeper("monitor", ff.MonitorPort)
	for i, p := range ff.NodePorts {
		f.Nodes = append(f.Nodes, f.keeper("node"+strconv.Itoa(i+1), p))
	}
	return f, nil
}

func (f *Formation) keeper(name string, port int) *Keeper {
	return &Keeper{Name: name, Port: port, PGData: filepath.Join(f.dir, "data", name), log: filepath.Join(f.dir, name+".log")}
}

func (f *Formation) loadOrPickPorts() (formationFile, error) {
	path := filepath.Join(f.dir, "formation.json")
	var ff formationFile
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &ff); err != nil {
			return ff, fmt.Errorf("pgha: %s: %w", path, err)
		}
		return ff, nil
	}
	nodes, err := f.opts.dataNodes()
	if err != nil {
		return ff, err
	}
	ports := f.opts.Ports
	if ports == nil {
		if ports, err = FreePorts(1 + nodes); err != nil {
			return ff, err
		}
	}
	ff = formationFile{MonitorPort: ports[0], NodePorts: ports[1:], DBName: f.opts.DBName, TLS: true, Scram: true}
	b, _ := json.MarshalIndent(ff, "", "  ")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil { //nolint:gosec // ports, no secret
		return ff, fmt.Errorf("pgha: %w", err)
	}
	return ff, nil
}

// socketDir is where pg_autoctl's nodes put their unix sockets.
const socketDir = "/var/run/postgresql"

// ensureSocketDir makes sure PostgreSQL's default socket directory exists:
// pg_autoctl leaves unix_socket_directories at Debian's default,
// /var/run/postgresql, where pgBackRest finds the nodes too. Debian's
// postgresql-common makes it, but /var/run is emptied at boot.
func (f *Formation) ensureSocketDir() error {
	const d = socketDir
	if _, err := os.Stat(d); err == nil {
		return nil
	}
	if err := os.MkdirAll(d, 0o2775); err != nil { //nolint:gosec // Debian's own mode for it
		return fmt.Errorf("pgha: %w", err)
	}
	return pgcluster.Chown(d)
}

// env is the environment of every pg_autoctl: its configuration and state
// in the formation's directory instead of the postgres user's home.
func (f *Formation) env() []string {
	env := []string{
		"XDG_CONFIG_HOME=" + filepath.Join(f.dir, "xdg", "config"),
		"XDG_DATA_HOME=" + filepath.Join(f.dir, "xdg", "share"),
		"XDG_RUNTIME_DIR=" + filepath.Join(f.dir, "run"),
		"PATH=" + filepath.Dir(f.pgctl) + ":/usr/bin:/bin",
		// initdb (which pg_autoctl runs) takes the encoding from the
		// locale: without one it makes SQL_ASCII databases, on which pgx
		// refuses the simple protocol the gateway uses. C.UTF-8 sorts as
		// C does, by code point.
		"LC_ALL=C.UTF-8",
		"LANG=C.UTF-8",
	}
	if f.scram {
		// Every libpq client pg_autoctl runs or starts finds its password
		// here (formation_auth.go): its monitor connection, pg_basebackup,
		// pg_rewind, and the standby's walreceiver.
		env = append(env, "PGPASSFILE="+f.PassFile())
	}
	return env
}

// autoctl runs one pg_autoctl command to completion.
func (f *Formation) autoctlRun(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, f.autoctl, args...)
	cmd.Env = f.env()
	if err := pgcluster.AsServerUser(cmd); err != nil {
		return "", err
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("pgha: pg_autoctl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// spawn starts a long-running pg_autoctl for k, in its own process group
// (a Ctrl-C in the terminal reaches the caller, which stops the keepers in
// order; Kill ends the whole group), logging to k's log file.
func (f *Formation) spawn(k *Keeper, args ...string) error {
	logf, err := os.OpenFile(k.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644) //nolint:gosec // a log without secrets
	if err != nil {
		return fmt.Errorf("pgha: %w", err)
	}
	cmd := exec.Command(f.autoctl, args...) //nolint:gosec // our own arguments
	cmd.Env = f.env()
	if err := pgcluster.AsServerUser(cmd); err != nil {
		logf.Close()
		return err
	}
	cmd.SysProcAttr.Setpgid = true // after AsServerUser, which sets SysProcAttr
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("pgha: starting pg_autoctl for %s: %w", k.Name, err)
	}
	k.cmd, k.exited = cmd, make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(k.exited)
	}()
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// startMonitor creates the monitor the first time (it listens on
// 127.0.0.1 only), runs it, and applies the timings.
func (f *Formation) startMonitor(ctx context.Context) error {
	m := f.Monitor
	if !exists(filepath.Join(m.PGData, "PG_VERSION")) {
		fmt.Fprintf(f.opts.Log, "pgha: creating the pg_auto_failover monitor in %s (port %d)\n", m.PGData, m.Port)
		// --hostname is an address: without it pg_autoctl probes a public
		// address to guess the host's (man pg_autoctl create monitor).
		tlsArgs, err := f.tlsArgs(m)
		if err != nil {
			return err
		}
		if _, err := f.autoctlRun(ctx, append([]string{"create", "monitor", "--pgdata", m.PGData, "--pgport", strconv.Itoa(m.Port),
			"--hostname", "127.0.0.1", "--pgctl", f.pgctl}, append(f.authArgs(), tlsArgs...)...)...); err != nil {
			return err
		}
		// There is no --listen for a monitor: its default is every address.
		if _, err := f.autoctlRun(ctx, "config", "set", "--pgdata", m.PGData, "postgresql.listen_addresses", "127.0.0.1"); err != nil {
			return err
		}
	}
	if err := f.writeAuth(m); err != nil {
		return err
	}
	if err := f.spawn(m, "run", "--pgdata", m.PGData); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, monitorStartMax)
	defer cancel()
	if err := f.waitPasswords(ctx, m, "pg_auto_failover", "postgres", "autoctl_node"); err != nil {
		return err
	}
	db, err := sql.Open("pgx", f.monitorAdminURL())
	if err != nil {
		return err
	}
	defer db.Close()
	if err := waitFor(ctx, db, "select count(*) >= 0 from pgautofailover.node"); err != nil {
		return fmt.Errorf("pgha: the monitor did not answer (log %s): %w", m.log, err)
	}
	return f.applyTimings(ctx, db)
}

func (f *Formation) applyTimings(ctx context.Context, db *sql.DB) error {
	t := f.opts.Timings
	for name, v := range map[string]int{
		"health_check_period":               t.HealthCheckPeriod,
		"health_check_timeout":              t.HealthCheckTimeout,
		"health_check_retry_delay":          t.HealthCheckRetryDelay,
		"health_check_max_retries":          t.HealthCheckMaxRetries,
		"node_considered_unhealthy_timeout": t.NodeConsideredUnhealthyTimout,
		"primary_demote_timeout":            t.PrimaryDemoteTimeout,
	} {
		if v <= 0 {
			continue
		}
		// ALTER SYSTEM takes no parameters; the names are ours, the
		// values integers.
		if _, err := db.ExecContext(ctx, fmt.Sprintf("alter system set pgautofailover.%s = %d", name, v)); err != nil {
			return fmt.Errorf("pgha: monitor setting %s: %w", name, err)
		}
	}
	_, err := db.ExecContext(ctx, "select pg_reload_conf()")
	return err
}

// startNode creates node n the first time (the first node becomes the
// primary; the second clones it and becomes its standby) and runs it.
func (f *Formation) startNode(ctx context.Context, n *Keeper, first bool) error {
	created := exists(filepath.Join(n.PGData, "PG_VERSION"))
	if !created {
		fmt.Fprintf(f.opts.Log, "pgha: creating data node %s in %s (port %d)\n", n.Name, n.PGData, n.Port)
		tlsArgs, err := f.tlsArgs(n)
		if err != nil {
			return err
		}
		args := append([]string{"create", "postgres", "--pgdata", n.PGData, "--pgport", strconv.Itoa(n.Port),
			"--listen", "127.0.0.1", "--hostname", "127.0.0.1", "--name", n.Name, "--dbname", f.opts.DBName,
			"--monitor", f.MonitorURL(), "--pgctl", f.pgctl}, append(f.authArgs(), tlsArgs...)...)
		if first && f.opts.Seed != "" {
			fmt.Fprintf(f.opts.Log, "pgha: %s is a copy of %s\n", n.Name, f.opts.Seed)
			if err := f.seedNode(n, f.opts.Seed); err != nil {
				return err
			}
		}
		if first {
			// Created without running, so that the archive settings are in
			// its postgresql.conf before it starts; the standby's base
			// backup copies them.
			if _, err := f.autoctlRun(ctx, args...); err != nil {
				return err
			}
			if err := f.writeNodeSettings(n); err != nil {
				return err
			}
		} else if err := f.spawn(n, append(args, "--run")...); err != nil {
			return err
		}
	}
	if n.cmd == nil {
		if err := f.writeAuth(n); err != nil {
			return err
		}
		if err := f.spawn(n, "run", "--pgdata", n.PGData); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, nodeStartMax)
	defer cancel()
	var nudge <-chan time.Time
	if !created && !first {
		t := time.NewTicker(checkpointNudge)
		defer t.Stop()
		nudge = t.C
	}
	// The passwords are set in the loop, not before it: a new standby's
	// server answers only after its base backup, which the nudge ends.
	passwordsSet := false
	for {
		if !passwordsSet {
			done, perr := f.setPasswords(ctx, n, "postgres", "postgres", "pgautofailover_replicator")
			if perr != nil {
				return perr
			}
			passwordsSet = done
		}
		st, err := f.State(ctx)
		if err == nil && passwordsSet {
			// The monitor remembers the states of the last run: the node's
			// own server must answer too.
			if s, ok := st.node(n.Name); ok && s.Reported == s.Assigned &&
				(s.Reported == "single" || s.Reported == "primary" || s.Reported == "secondary") && f.answers(ctx, n) {
				fmt.Fprintf(f.opts.Log, "pgha: %s is %s on 127.0.0.1:%d\n", n.Name, s.Reported, n.Port)
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pgha: %s did not become primary or secondary within %s (log %s): %v", n.Name, nodeStartMax, n.log, err)
		case <-n.exited:
			return fmt.Errorf("pgha: pg_autoctl for %s exited; the end of %s:\n%s", n.Name, n.log, tailFile(n.log, 20))
		case <-nudge:
			f.checkpointPrimary(ctx)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// answers reports whether n's PostgreSQL accepts a connection.
func (f *Formation) answers(ctx context.Context, n *Keeper) bool {
	db, err := sql.Open("pgx", f.NodeURL(n, "postgres"))
	if err != nil {
		return false
	}
	defer db.Close()
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return db.PingContext(pctx) == nil
}

// writeNodeSettings appends the gateway's settings to a new node's
// postgresql.conf (after pg_autoctl's include, so they win).
func (f *Formation) writeNodeSettings(n *Keeper) error {
	settings := map[string]string{
		// Keep enough WAL for a node that comes back to rewind and catch
		// up without a new base backup.
		"wal_keep_size": walKeepSize,
		// pg_autoctl computes shared_buffers from the machine's memory
		// (6 GB here) in its include, and initdb's 128MB after it wins:
		// state it, small, since three servers share the machine.
		"shared_buffers": "128MB",
	}
	logs, err := f.nodeLogSettings()
	if err != nil {
		return err
	}
	for k, v := range logs {
		settings[k] = v
	}
	if f.opts.Repo != nil {
		for k, v := range f.opts.Repo.ArchiveSettings() {
			settings[k] = v
		}
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(gatewaySettingsMarker)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s = '%s'\n", k, strings.ReplaceAll(settings[k], "'", "''"))
	}
	conf, err := os.OpenFile(filepath.Join(n.PGData, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("pgha: %w", err)
	}
	if _, err := conf.WriteString(b.String()); err != nil {
		conf.Close()
		return fmt.Errorf("pgha: %w", err)
	}
	return conf.Close()
}

// NodeLogDir is where the data nodes' PostgreSQL write their logs: beside
// their data directories, not inside (issue 31, finding 6). pg_autoctl sets
// log_directory 'log', inside PGDATA, which pg_rewind replaces with the new
// primary's when a failed node rejoins: the incident's evidence went with
// it. Turning the logging collector off is no way out: pg_autoctl then
// sends the server's output to PGDATA/startup.log. The directory is one
// for both nodes because postgresql.conf, where it is set, is copied to the
// standby by its base backup and back by pg_rewind: a per-node value there
// would end up the other node's. On this one machine both nodes' files
// are in it (each named by its server's start time; pg_current_logfile()
// on a node names its own); on three machines it is each machine's own.
func (f *Formation) NodeLogDir() string { return filepath.Join(f.dir, "pglog") }

// nodeLogSettings are the settings that put a node's log in NodeLogDir,
// which they create.
func (f *Formation) nodeLogSettings() (map[string]string, error) {
	d := f.NodeLogDir()
	if err := os.MkdirAll(d, 0o700); err != nil {
		return nil, fmt.Errorf("pgha: %w", err)
	}
	if err := pgcluster.Chown(d); err != nil {
		return nil, fmt.Errorf("pgha: %w", err)
	}
	return map[string]string{"logging_collector": "on", "log_directory": d}, nil
}

// checkpointPrimary runs CHECKPOINT on whichever node is primary.
func (f *Formation) checkpointPrimary(ctx context.Context) {
	db, err := sql.Open("pgx", f.URL("postgres"))
	if err != nil {
		return
	}
	defer db.Close()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, _ = db.ExecContext(cctx, "checkpoint")
}

// MonitorURL is the monitor's database as autoctl_node, what the nodes'
// keepers connect with (their password from PGPASSFILE).
func (f *Formation) MonitorURL() string {
	return fmt.Sprintf("postgres://autoctl_node@127.0.0.1:%d/pg_auto_failover?%s", f.Monitor.Port, f.sslQuery())
}

// monitorAdminURL reaches the monitor as the superuser (ALTER SYSTEM).
func (f *Formation) monitorAdminURL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/pg_auto_failover?%s%s", f.Monitor.Port, f.sslQuery(), f.passQuery())
}

// URL is the formation's multi-host URL of database db as the postgres
// user: what pg_autoctl show uri gives, with connect_timeout per host and
// TLS verified against the formation's CA (formation_tls.go). connect_timeout is 5 s, docs/ha.md's advice: at
// 2 s a starved machine's connection set-up failed every new connection
// for minutes ("CPU starvation" there; issue 31, finding 4).
func (f *Formation) URL(db string) string {
	hosts := make([]string, 0, len(f.Nodes))
	for _, n := range f.Nodes {
		hosts = append(hosts, "127.0.0.1:"+strconv.Itoa(n.Port))
	}
	return fmt.Sprintf("postgres://postgres@%s/%s?target_session_attrs=read-write&connect_timeout=%d&%s%s",
		strings.Join(hosts, ","), db, ConnectTimeoutSeconds, f.sslQuery(), f.passQuery())
}

// ConnectTimeoutSeconds is the formation URL's connect_timeout.
const ConnectTimeoutSeconds = 5

// NodeURL is one node's URL for database db.
func (f *Formation) NodeURL(n *Keeper, db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?%s%s", n.Port, db, f.sslQuery(), f.passQuery())
}
