// Package pgcluster runs a private PostgreSQL cluster from the PostgreSQL
// binaries on the machine: initdb once, then the server on a unix socket in a
// directory the project owns, with no TCP port. It is what `make run` and the
// tests use when DATABASE_URL is not set.
//
// PostgreSQL refuses to run as root. When this process is root, the cluster
// runs as the unprivileged OS user "postgres" (which Debian's postgresql
// package creates): the directories are handed to that user and the server
// processes get its credentials.
package pgcluster

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
)

// Options configure a cluster.
type Options struct {
	// Dir holds the cluster: Dir/data is the data directory and the socket
	// lives in Dir/run.
	Dir string
	// Durable keeps fsync and synchronous commit on. Tests turn it off: a
	// test database that dies with the machine is no loss.
	Durable bool
	// Settings are extra server settings (name → value). They are given on
	// the server's command line, so they win over postgresql.conf and over
	// ALTER SYSTEM.
	Settings map[string]string
	// Port is the server's port (default 5432): the TCP port when
	// ListenAddresses is set, and the number in the socket's name always.
	Port int
	// ListenAddresses are the TCP addresses to listen on, for instance
	// "127.0.0.1" for a replica to connect to; empty means no TCP at all.
	ListenAddresses string
	// DataChecksums makes initdb checksum every data page. pg_rewind (which
	// brings a failed primary back as a standby) needs it or wal_log_hints,
	// and only this one is recorded for good in the cluster itself.
	DataChecksums bool
	// TrustTCP lets every role in without a password, over the socket and
	// over loopback TCP (with or without TLS), as every cluster did before
	// issue 31. Only for the loopback test pair of internal/pgha and the
	// chaos tools, which connect as postgres over TCP; the default is
	// scram-sha-256 and TLS-only TCP (auth.go, docs/security.md).
	TrustTCP bool
	// Log receives progress lines meant for a person ("initialising …").
	Log io.Writer
}

// Cluster is a running server.
type Cluster struct {
	dir       string // the real directory (after any fallback)
	socketDir string
	port      int
	cmd       *exec.Cmd
	owned     bool // this process started the server and stops it
	exited    chan struct{}
}

const (
	superuser    = "postgres"
	startTimeout = 60 * time.Second
	stopTimeout  = 30 * time.Second
	// socketPathBytesMax is the limit of a unix socket path on Linux (108
	// bytes with the terminating NUL).
	socketPathBytesMax = 107
)

// Start makes sure the cluster in opts.Dir is initialised and running and
// returns it. If a server is already running on that directory (another
// gateway process started it), Start connects to it and Stop leaves it alone.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	bin, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	owner, err := serverUser()
	if err != nil {
		return nil, err
	}
	dir, err := prepareDir(opts.Dir, owner, opts.Log)
	if err != nil {
		return nil, err
	}
	port := opts.Port
	if port == 0 {
		port = 5432
	}
	c := &Cluster{dir: dir, socketDir: filepath.Join(dir, "run"), port: port, exited: make(chan struct{})}
	if len(c.socketDir)+len("/.s.PGSQL.")+len(strconv.Itoa(port)) > socketPathBytesMax {
		return nil, fmt.Errorf("pgcluster: socket path %s is too long for a unix socket; use a shorter directory", c.socketDir)
	}

	unlock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()

	if c.ping(ctx) == nil {
		return c, nil // someone else's server: use it, do not stop it
	}
	if err := removeStalePid(c.dataDir()); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(c.dataDir(), "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(opts.Log, "pgcluster: initialising a new PostgreSQL cluster in %s\n", c.dataDir())
		if err := c.initdb(ctx, bin, owner, opts); err != nil {
			return nil, err
		}
	}
	if err := c.start(ctx, bin, owner, opts); err != nil {
		return nil, err
	}
	return c, nil
}

// dataDir is the PGDATA directory.
func (c *Cluster) dataDir() string { return filepath.Join(c.dir, "data") }

// DataDir is the PGDATA directory.
func (c *Cluster) DataDir() string { return c.dataDir() }

// Port is the server's port.
func (c *Cluster) Port() int { return c.port }

// Dir is the cluster's directory (which may be a fallback outside the
// requested one, see prepareDir).
func (c *Cluster) Dir() string { return c.dir }

// URL returns a connection URL for database dbname as the superuser, over
// the unix socket.
func (c *Cluster) URL(dbname string) string {
	q := url.Values{}
	q.Set("host", c.socketDir)
	q.Set("port", strconv.Itoa(c.port))
	q.Set("sslmode", "disable")
	return (&url.URL{Scheme: "postgres", User: url.User(superuser), Path: "/" + dbname, RawQuery: q.Encode()}).String()
}

// CreateDatabase creates dbname if it does not exist yet.
func (c *Cluster) CreateDatabase(ctx context.Context, dbname string) error {
	return c.createDatabase(ctx, dbname, "")
}

// createDatabase creates dbname, owned by owner ("": the superuser), if it
// does not exist yet.
func (c *Cluster) createDatabase(ctx context.Context, dbname, owner string) error {
	db, err := sql.Open("pgx", c.URL("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	var exists bool
	if err := db.QueryRowContext(ctx, "select exists (select 1 from pg_database where datname = $1)", dbname).Scan(&exists); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if exists {
		return nil
	}
	// CREATE DATABASE takes no bind parameters; the name is quoted as an
	// identifier by PostgreSQL's own rules.
	stmt := "create database " + quoteIdent(dbname) //nolint:gosec // G202: an identifier, quoted by quoteIdent
	if owner != "" {
		stmt += " owner " + quoteIdent(owner)
	}
	_, err = db.ExecContext(ctx, stmt)
	return err
}

// Stop shuts the server down if this process started it: a fast shutdown
// (SIGINT: open transactions roll back, everything committed is on disk),
// then an immediate one if it takes longer than stopTimeout.
func (c *Cluster) Stop() error {
	if !c.owned || c.cmd == nil {
		return nil
	}
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.exited:
		return nil
	case <-time.After(stopTimeout):
		_ = c.cmd.Process.Signal(syscall.SIGQUIT)
		<-c.exited
		return fmt.Errorf("pgcluster: the server did not stop within %s and was stopped immediately", stopTimeout)
	}
}

// Kill stops the server in immediate mode (SIGQUIT: no checkpoint, crash
// recovery at the next start), for tests of outages. Start brings it back.
func (c *Cluster) Kill() {
	if c.cmd != nil {
		_ = c.cmd.Process.Signal(syscall.SIGQUIT)
		<-c.exited
	}
}

// Crash kills the server and every one of its processes with SIGKILL at
// once, as losing the machine would (no shutdown message reaches a client,
// nothing is flushed), for tests of failover. Start brings it back (crash
// recovery).
func (c *Cluster) Crash() {
	if c.cmd != nil {
		// The postmaster's children are each in a session of their own
		// (KillServer): they are killed one by one, then the group.
		KillServer(c.dataDir())
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.exited
	}
}

func (c *Cluster) initdb(ctx context.Context, bin Binaries, owner *user.User, opts Options) error {
	// pg_hba.conf is rewritten before every start (auth.go); these are
	// only initdb's own defaults, never served.
	args := []string{"-D", c.dataDir(), "-U", superuser, "--auth-local=peer", "--auth-host=scram-sha-256",
		"--encoding=UTF8", "--locale=C"}
	if !opts.Durable {
		args = append(args, "--no-sync")
	}
	if opts.DataChecksums {
		args = append(args, "--data-checksums")
	}
	cmd := exec.CommandContext(ctx, bin.InitDB, args...)
	runAs(cmd, owner)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgcluster: initdb failed: %w\n%s", err, out)
	}
	return nil
}

func (c *Cluster) start(ctx context.Context, bin Binaries, owner *user.User, opts Options) error {
	settings := map[string]string{ //nolint:gosec // G101: file names of the server's TLS key, not credentials
		"listen_addresses":        opts.ListenAddresses,
		"port":                    strconv.Itoa(c.port),
		"unix_socket_directories": c.socketDir,
		"max_connections":         "300",
		"shared_buffers":          "256MB",
		"logging_collector":       "off",
		"log_min_messages":        "warning",
		// The gateway's own limits; a server-side copy catches a stuck client.
		"idle_in_transaction_session_timeout": "120s",
		// Passwords are stored as SCRAM verifiers, never MD5; TCP is TLS
		// with the cluster's own CA (auth.go, tls.go).
		"password_encryption": "scram-sha-256",
		"ssl":                 "on",
		// Our own files (tls.go), also for a data directory restored from
		// a formation's node, whose postgresql.conf names the node's.
		"ssl_cert_file": "server.crt",
		"ssl_key_file":  "server.key",
		"ssl_ca_file":   "",
	}
	if err := c.writeAuth(owner, opts.TrustTCP); err != nil {
		return err
	}
	if err := c.ensureTLS(owner); err != nil {
		return err
	}
	if !opts.Durable {
		settings["fsync"] = "off"
		settings["synchronous_commit"] = "off"
		settings["full_page_writes"] = "off"
	}
	for k, v := range opts.Settings {
		settings[k] = v
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	args := []string{"-D", c.dataDir()}
	for _, k := range keys {
		args = append(args, "-c", k+"="+settings[k])
	}
	logFile, err := os.OpenFile(filepath.Join(c.dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if owner != nil {
		_ = logFile.Chown(atoi(owner.Uid), atoi(owner.Gid))
	}
	// Not CommandContext: the server outlives the context of Start.
	cmd := exec.Command(bin.Postgres, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	runAs(cmd, owner)
	// Its own process group: a Ctrl-C in the terminal reaches the gateway,
	// which drains its work and then stops the server in order.
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("pgcluster: starting postgres: %w", err)
	}
	c.cmd, c.owned = cmd, true
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(c.exited)
	}()

	deadline := time.Now().Add(startTimeout)
	for {
		err := c.ping(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-c.exited:
			return fmt.Errorf("pgcluster: postgres exited during start-up; the end of %s:\n%s",
				filepath.Join(c.dir, "postgres.log"), tail(filepath.Join(c.dir, "postgres.log"), 20))
		case <-ctx.Done():
			_ = c.Stop()
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = c.Stop()
			return fmt.Errorf("pgcluster: postgres did not accept connections within %s: %v", startTimeout, err)
		}
	}
}

// ping connects once and runs a trivial query.
func (c *Cluster) ping(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(c.socketDir, ".s.PGSQL."+strconv.Itoa(c.port))); err != nil {
		return err
	}
	db, err := sql.Open("pgx", c.URL("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

// Binaries are the PostgreSQL programs the cluster needs.
type Binaries struct {
	InitDB   string
	Postgres string
}

// Program returns the path of another PostgreSQL program of the same
// installation (pg_basebackup, pg_rewind, pg_ctl, …): next to the real
// postgres binary, which PATH may reach through a symbolic link.
func (b Binaries) Program(name string) string {
	real, err := filepath.EvalSymlinks(b.Postgres)
	if err != nil {
		real = b.Postgres
	}
	return filepath.Join(filepath.Dir(real), name)
}

// Command prepares a PostgreSQL program of the installation the server
// runs from (pg_basebackup, pg_rewind, …) to run as the user the server
// runs as: the postgres user when this process is root.
func Command(ctx context.Context, program string, args ...string) (*exec.Cmd, error) {
	bin, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	owner, err := serverUser()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin.Program(program), args...)
	runAs(cmd, owner)
	return cmd, nil
}

// AsServerUser makes cmd run as the user the server runs as (the postgres
// user when this process is root), for the programs that work on a
// cluster's files beside the server: pg_autoctl, pgbackrest.
func AsServerUser(cmd *exec.Cmd) error {
	owner, err := serverUser()
	if err != nil {
		return err
	}
	env := cmd.Env
	runAs(cmd, owner)
	if env != nil {
		cmd.Env = append(cmd.Env, env...) // the caller's variables win
	}
	return nil
}

// PrepareDir makes dir ready to hold a cluster (dir/data, dir/run) for the
// server's user and returns the directory actually used (see prepareDir),
// for a data directory that is filled by another program than initdb (a
// replica's pg_basebackup) before Start.
func PrepareDir(dir string, log io.Writer) (string, error) {
	if log == nil {
		log = io.Discard
	}
	owner, err := serverUser()
	if err != nil {
		return "", err
	}
	return prepareDir(dir, owner, log)
}

// Chown gives path to the server's user when this process is root, so that
// a file written for the server (standby.signal) is the server's.
func Chown(path string) error {
	owner, err := serverUser()
	if err != nil || owner == nil {
		return err
	}
	return os.Chown(path, atoi(owner.Uid), atoi(owner.Gid))
}

// FindBinaries looks for initdb and postgres on PATH, then in Debian's
// /usr/lib/postgresql/<version>/bin, newest version first.
func FindBinaries() (Binaries, error) {
	if i, err := exec.LookPath("initdb"); err == nil {
		if p, err := exec.LookPath("postgres"); err == nil {
			return Binaries{InitDB: i, Postgres: p}, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		b := Binaries{InitDB: filepath.Join(d, "initdb"), Postgres: filepath.Join(d, "postgres")}
		if isExecutable(b.InitDB) && isExecutable(b.Postgres) {
			return b, nil
		}
	}
	return Binaries{}, errors.New("pgcluster: the PostgreSQL server binaries (initdb, postgres) are not installed; " +
		"`make run` and `make test` install Debian's postgresql package, or run: apt-get install -y postgresql")
}

func versionOf(binDir string) int {
	return atoi(filepath.Base(filepath.Dir(binDir)))
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode()&0o111 != 0
}

// serverUser is the OS user the server runs as: nil for "this process's
// user", or the postgres user when this process is root.
func serverUser() (*user.User, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(superuser)
	if err != nil {
		return nil, errors.New("pgcluster: running as root, and PostgreSQL refuses to: " +
			"the server runs as the OS user \"postgres\", which does not exist here. " +
			"Installing Debian's postgresql package creates it (apt-get install -y postgresql)")
	}
	return u, nil
}

func runAs(cmd *exec.Cmd, u *user.User) {
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if u != nil {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(atoi(u.Uid)), Gid: uint32(atoi(u.Gid))}
		cmd.Dir = "/" // the caller's directory may not be readable by that user
		cmd.Env = append(cmd.Env, "HOME="+u.HomeDir, "USER="+u.Username)
	}
}

// prepareDir creates dir (and data/, run/ inside it) for the server user.
// When the server runs as another user who cannot reach dir (its parent is
// a private home directory, say /root), the cluster lives instead in a
// directory under /var/tmp named after dir, and dir/cluster points there, so
// that the data still belongs to this project directory.
func prepareDir(dir string, owner *user.User, log io.Writer) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("pgcluster: %w", err)
	}
	real := abs
	if owner != nil && !reachableByOthers(abs) {
		link := filepath.Join(abs, "cluster")
		if target, err := os.Readlink(link); err == nil {
			real = target
		} else {
			sum := sha256.Sum256([]byte(abs))
			real = filepath.Join("/var/tmp", "gateway-pg-"+hex.EncodeToString(sum[:6]))
			fmt.Fprintf(log, "pgcluster: %s is not reachable by the postgres user; the cluster lives in %s (linked from %s)\n", abs, real, link)
			if err := os.Symlink(real, link); err != nil {
				return "", fmt.Errorf("pgcluster: %w", err)
			}
		}
	}
	for _, d := range []string{real, filepath.Join(real, "data"), filepath.Join(real, "run")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", fmt.Errorf("pgcluster: %w", err)
		}
		if err := os.Chmod(d, 0o700); err != nil {
			return "", fmt.Errorf("pgcluster: %w", err)
		}
		if owner != nil {
			if err := os.Chown(d, atoi(owner.Uid), atoi(owner.Gid)); err != nil {
				return "", fmt.Errorf("pgcluster: %w", err)
			}
		}
	}
	return real, nil
}

// reachableByOthers reports whether every ancestor of dir can be traversed
// by a user who is neither its owner nor in its group.
func reachableByOthers(dir string) bool {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil || st.Mode().Perm()&0o001 == 0 {
			return false
		}
		if d == "/" {
			return true
		}
	}
}

// lockDir serialises Start between processes sharing a directory.
func lockDir(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, "start.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// removeStalePid deletes postmaster.pid when the process it names is gone, or
// stops that process when it is an orphaned server of this directory that no
// longer answers on its socket.
func removeStalePid(dataDir string) error {
	pidFile := filepath.Join(dataDir, "postmaster.pid")
	b, err := os.ReadFile(pidFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	pid := atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	// The pid may have been reused by an unrelated process since: only a
	// postgres process is ever signalled.
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if pid > 0 && strings.Contains(string(cmdline), "postgres") && syscall.Kill(pid, 0) == nil {
		// Alive but not answering: stop it, then let it clean up.
		_ = syscall.Kill(pid, syscall.SIGQUIT)
		for i := 0; i < 100 && syscall.Kill(pid, 0) == nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if err := os.Remove(pidFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("pgcluster: %w", err)
	}
	return nil
}

func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		lines = append(lines, s.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func init() {
	// Make sure the pgx driver is registered for database/sql.
	_ = stdlib.GetDefaultDriver()
}
