// Package pgha runs PostgreSQL with replication on this machine, from the
// machine's own binaries, for the gateway's high-availability tests and
// development (docs/ha.md):
//
//   - Pair: a primary and a synchronous standby started by the project
//     itself (ledger/pgcluster), which a test can crash, promote and rejoin
//     (pg_rewind). It needs only the PostgreSQL server binaries, so it runs
//     under `make test` on a fresh machine.
//   - Formation: a pg_auto_failover monitor and two data nodes driven
//     through pg_autoctl (`make run-ha`, the chaos runs).
//   - Repo: a pgBackRest repository for backups and point-in-time restores.
//
// Every server listens on 127.0.0.1 only, on ports below the ephemeral range
// (ports.go), and runs as the postgres user when this process is root.
package pgha

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/paygate/gateway/ledger/pgcluster"
)

// PairOptions configure a Pair.
type PairOptions struct {
	// Dir holds the two nodes' clusters, Dir/a and Dir/b.
	Dir string
	// Durable keeps fsync on. Tests leave it off: what synchronous
	// replication guarantees (the standby has the commit's WAL before the
	// client hears of it) does not depend on fsync.
	Durable bool
	// Settings are extra server settings for both nodes.
	Settings map[string]string
	// Log receives progress lines meant for a person.
	Log io.Writer
}

// Node is one server of a Pair.
type Node struct {
	// Name is the node's application_name as a standby, the name
	// synchronous_standby_names gives it.
	Name string
	Port int

	dir     string // the cluster's directory (pgcluster)
	cluster *pgcluster.Cluster
}

// URL is a connection URL to database db on this node alone, over TCP.
func (n *Node) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", n.Port, url.PathEscape(db))
}

// DataDir is the node's PGDATA.
func (n *Node) DataDir() string { return filepath.Join(n.dir, "data") }

// SocketDir is the directory of the node's unix socket (pgcluster).
func (n *Node) SocketDir() string { return filepath.Join(n.dir, "run") }

// Server describes the node for a pgBackRest stanza.
func (n *Node) Server() PGServer {
	return PGServer{DataDir: n.DataDir(), Port: n.Port, SocketPath: n.SocketDir()}
}

// Open opens database/sql on database db of this node alone.
func (n *Node) Open(db string) (*sql.DB, error) { return sql.Open("pgx", n.URL(db)) }

// openForReload opens the node's postgres database with no session kept
// between statements, for code that changes a setting with pg_reload_conf
// and then waits until it holds. The wait must run on a new session:
// pg_reload_conf only signals the postmaster, which reloads the file and
// then signals its sessions one by one, newest first, so the session that
// asked can see the new value while older ones (a gateway's pooled
// connections) have not been signalled yet. A session forked after the
// reload inherits the postmaster's settings, and the postmaster forks only
// between two signal handlings, so a new session that sees the value means
// every older one has the signal pending, and a session handles a pending
// reload before it runs its next command.
func (n *Node) openForReload() (*sql.DB, error) {
	db, err := n.Open("postgres")
	if err != nil {
		return nil, err
	}
	db.SetMaxIdleConns(0)
	return db, nil
}

// Pair is a primary and a synchronous standby on loopback ports. Its methods
// are not safe for concurrent use.
type Pair struct {
	opts    PairOptions
	nodes   [2]*Node
	primary int // index in nodes
}

// Timeouts of the pair's own waits. They bound a broken setup, not the
// normal case (which takes a second or two).
const (
	streamWaitMax = 60 * time.Second
	promoteWaitS  = 60
)

// StartPair starts a primary (initdb) and a standby made from it by
// pg_basebackup, streaming from it, and makes the standby synchronous: from
// when StartPair returns, a commit on the primary is acknowledged only once
// the standby has flushed its WAL (synchronous_commit = on,
// synchronous_standby_names = 'ANY 1 (<standby>)').
func StartPair(ctx context.Context, opts PairOptions) (*Pair, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	ports, err := FreePorts(2)
	if err != nil {
		return nil, err
	}
	p := &Pair{opts: opts}
	for i, name := range []string{"a", "b"} {
		dir, err := pgcluster.PrepareDir(filepath.Join(opts.Dir, name), opts.Log)
		if err != nil {
			return nil, err
		}
		p.nodes[i] = &Node{Name: "pgha_" + name, Port: ports[i], dir: dir}
	}
	a, b := p.nodes[0], p.nodes[1]
	if err := p.startNodeFreshPort(ctx, a, nil); err != nil {
		return nil, err
	}
	if err := keepWAL(ctx, a); err != nil {
		p.Stop()
		return nil, err
	}
	if err := p.baseBackup(ctx, b, a); err != nil {
		p.Stop()
		return nil, err
	}
	if err := p.startNodeFreshPort(ctx, b, a); err != nil {
		p.Stop()
		return nil, err
	}
	if err := p.makeSynchronous(ctx, a, b); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// settings are the server settings of every node, primary or standby: what
// streaming replication and pg_rewind need, and small memory, since several
// servers share a test machine.
func (p *Pair) settings(n *Node, upstream *Node) map[string]string {
	s := map[string]string{
		// max_wal_senders, max_connections and the like stay at their
		// defaults: a standby refuses to run with less than its primary
		// had, and pg_rewind's crash recovery runs with postgresql.conf
		// alone (the defaults), not with these settings.
		"wal_level": "replica",
		// pg_rewind reads the pages a diverged primary changed from the
		// WAL, which needs full-page images.
		"full_page_writes":     "on",
		"synchronous_commit":   "on",
		"hot_standby":          "on",
		"hot_standby_feedback": "on",
		"cluster_name":         n.Name,
		"shared_buffers":       "32MB",
	}
	if upstream != nil {
		// The application_name is the name synchronous_standby_names
		// gives the standby. Given on the command line, primary_conninfo
		// wins over a copy in postgresql.auto.conf that pg_rewind may
		// have brought from the other node.
		s["primary_conninfo"] = fmt.Sprintf("host=127.0.0.1 port=%d user=postgres application_name=%s sslmode=disable",
			upstream.Port, n.Name)
	}
	for k, v := range p.opts.Settings {
		s[k] = v
	}
	return s
}

// startNode starts n: as a standby of upstream when upstream is not nil
// (standby.signal, primary_conninfo), else as whatever its data directory
// is.
func (p *Pair) startNode(ctx context.Context, n *Node, upstream *Node) error {
	if upstream != nil {
		sig := filepath.Join(n.DataDir(), "standby.signal")
		if err := os.WriteFile(sig, nil, 0o600); err != nil {
			return fmt.Errorf("pgha: %w", err)
		}
		if err := pgcluster.Chown(sig); err != nil {
			return fmt.Errorf("pgha: %w", err)
		}
	}
	c, err := pgcluster.Start(ctx, pgcluster.Options{
		Dir: n.dir, Port: n.Port, ListenAddresses: "127.0.0.1", Durable: p.opts.Durable,
		DataChecksums: true, Settings: p.settings(n, upstream), Log: p.opts.Log,
		// The pair is a loopback test fixture whose nodes replicate and
		// are reached as postgres over TCP without a password; the
		// formation is what runs for real (docs/security.md).
		TrustTCP: true,
	})
	if err != nil {
		return fmt.Errorf("pgha: starting %s: %w", n.Name, err)
	}
	n.cluster = c
	return nil
}

// portTries bounds startNodeFreshPort.
const portTries = 3

// startNodeFreshPort is startNode for a node's first start: FreePorts
// checked the port, but another process (a parallel test) may have taken it
// since; then the node starts on another one.
func (p *Pair) startNodeFreshPort(ctx context.Context, n *Node, upstream *Node) error {
	for try := 1; ; try++ {
		err := p.startNode(ctx, n, upstream)
		if err == nil || try == portTries || !strings.Contains(err.Error(), "Address already in use") {
			return err
		}
		ports, perr := FreePorts(1)
		if perr != nil {
			return err
		}
		fmt.Fprintf(p.opts.Log, "pgha: %s: port %d taken meanwhile; trying %d\n", n.Name, n.Port, ports[0])
		n.Port = ports[0]
	}
}

// baseBackup fills n's empty data directory with a copy of from.
func (p *Pair) baseBackup(ctx context.Context, n, from *Node) error {
	fmt.Fprintf(p.opts.Log, "pgha: %s: base backup of %s\n", n.Name, from.Name)
	conn := fmt.Sprintf("host=127.0.0.1 port=%d user=postgres sslmode=disable", from.Port)
	// --checkpoint=fast: a spread checkpoint made the base backup wait for
	// over a minute on an idle server (docs/ha.md).
	args := []string{"--dbname", conn, "--pgdata", n.DataDir(), "--wal-method=stream", "--checkpoint=fast"}
	if !p.opts.Durable {
		args = append(args, "--no-sync")
	}
	return run(ctx, "pg_basebackup", args...)
}

// makeSynchronous waits until standby streams from primary, then makes it
// the primary's synchronous standby and waits until the primary says so.
func (p *Pair) makeSynchronous(ctx context.Context, primary, standby *Node) error {
	db, err := primary.openForReload()
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, streamWaitMax)
	defer cancel()
	if err := waitFor(ctx, db, "select count(*) = 1 from pg_stat_replication where application_name = $1 and state = 'streaming'", standby.Name); err != nil {
		return fmt.Errorf("pgha: %s does not stream from %s: %w", standby.Name, primary.Name, err)
	}
	// ALTER SYSTEM takes no parameters; the name is ours, made of [a-z_].
	if _, err := db.ExecContext(ctx, "alter system set synchronous_standby_names = 'ANY 1 ("+standby.Name+")'"); err != nil {
		return fmt.Errorf("pgha: %w", err)
	}
	if _, err := db.ExecContext(ctx, "select pg_reload_conf()"); err != nil {
		return fmt.Errorf("pgha: %w", err)
	}
	// A new session has the new list only once every older session has
	// been signalled (openForReload), and the standby is then named
	// "quorum" (ANY n). And it must have caught up: a standby that follows the wrong timeline
	// streams for a moment, then stops, and every commit would wait for it.
	if err := waitFor(ctx, db, "select current_setting('synchronous_standby_names') <> '' and "+
		"exists (select 1 from pg_stat_replication where application_name = $1 and state = 'streaming' "+
		"and sync_state = 'quorum' and flush_lsn >= pg_current_wal_flush_lsn())", standby.Name); err != nil {
		return fmt.Errorf("pgha: %s did not become synchronous: %w", standby.Name, err)
	}
	// Whether a commit waits for the standby at all is a flag in shared
	// memory that the checkpointer sets when it reloads, and the postmaster
	// signals the checkpointer after the sessions: until it has run, a
	// commit is acknowledged without the standby. The postmaster finished
	// signalling before it forked the session above, and the checkpointer
	// handles a pending reload before it starts a requested checkpoint, so
	// once CHECKPOINT returns every commit waits.
	return checkpoint(ctx, primary)
}

// Primary is the node that is (or last was) the primary.
func (p *Pair) Primary() *Node { return p.nodes[p.primary] }

// Standby is the other node.
func (p *Pair) Standby() *Node { return p.nodes[1-p.primary] }

// Nodes are both nodes, in the order of URL's host list.
func (p *Pair) Nodes() []*Node { return p.nodes[:] }

// URL is the multi-host URL of database db that a client uses to reach
// whichever node is primary: libpq's (and pgx's) form, trying the hosts in
// order and keeping the first that accepts writes. connect_timeout bounds
// each host's attempt, so a host that does not answer costs 2 s, not the
// caller's whole budget.
func (p *Pair) URL(db string) string {
	hosts := make([]string, 0, len(p.nodes))
	for _, n := range p.nodes {
		hosts = append(hosts, "127.0.0.1:"+strconv.Itoa(n.Port))
	}
	return fmt.Sprintf("postgres://postgres@%s/%s?target_session_attrs=read-write&connect_timeout=2&sslmode=disable",
		strings.Join(hosts, ","), url.PathEscape(db))
}

// CreateDatabase creates db on the primary (the standby receives it).
func (p *Pair) CreateDatabase(ctx context.Context, db string) error {
	return p.Primary().cluster.CreateDatabase(ctx, db)
}

// Crash kills n's server and all its processes (SIGKILL), as losing its
// machine would.
func (n *Node) Crash() {
	if n.cluster != nil {
		n.cluster.Crash()
		n.cluster = nil
	}
}

// Stop shuts n's server down (fast mode).
func (n *Node) Stop() {
	if n.cluster != nil {
		_ = n.cluster.Stop()
		n.cluster = nil
	}
}

// Running reports whether n's server was started and not stopped by the
// pair.
func (n *Node) Running() bool { return n.cluster != nil }

// RestartStandby starts the standby again after it was crashed or stopped
// (it resumes streaming from the primary and is synchronous again as soon as
// it has caught up).
func (p *Pair) RestartStandby(ctx context.Context) error {
	s := p.Standby()
	if s.Running() {
		return nil
	}
	return p.startNode(ctx, s, p.Primary())
}

// Stop stops both servers, the standby first.
func (p *Pair) Stop() {
	for _, n := range []*Node{p.Standby(), p.Primary()} {
		if n != nil {
			n.Stop()
		}
	}
}

// WaitReplay waits until the standby has replayed the WAL up to lsn
// (pg_last_wal_replay_lsn), so that what was committed up to there is
// visible in its reads.
func (p *Pair) WaitReplay(ctx context.Context, lsn string) error {
	db, err := p.Standby().Open("postgres")
	if err != nil {
		return err
	}
	defer db.Close()
	return waitFor(ctx, db, "select pg_last_wal_replay_lsn() >= $1::pg_lsn", lsn)
}

// waitFor polls a query that returns one boolean until it is true or ctx
// ends.
func waitFor(ctx context.Context, db *sql.DB, query string, args ...any) error {
	var last error
	for {
		var ok bool
		err := db.QueryRowContext(ctx, query, args...).Scan(&ok)
		if err == nil && ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("%w (last error: %v)", ctx.Err(), last)
			}
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// run runs a PostgreSQL program as the server's user and returns its output
// in the error when it fails.
func run(ctx context.Context, program string, args ...string) error {
	_, err := output(ctx, program, args...)
	return err
}

// output runs a PostgreSQL program as the server's user and returns what
// it printed.
func output(ctx context.Context, program string, args ...string) ([]byte, error) {
	cmd, err := pgcluster.Command(ctx, program, args...)
	if err != nil {
		return nil, err
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("pgha: %s failed: %w\n%s", program, err, out)
	}
	return out, nil
}

func init() {
	// Make sure the pgx driver is registered for database/sql.
	_ = stdlib.GetDefaultDriver()
}
