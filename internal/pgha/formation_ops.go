package pgha

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/paygate/gateway/ledger/pgcluster"
)

// What a running formation is asked while it runs: its state, and the
// faults and operations of the tests and of an operator (kill a node, run
// it again, a controlled failover, stop).

// NodeState is what the monitor knows of a node.
type NodeState struct {
	Name     string
	Port     int
	Reported string // the state the node's keeper reached
	Assigned string // the state the monitor wants it in
	LSN      string
	Healthy  bool
}

// FormationState is the monitor's view of every node.
type FormationState []NodeState

func (s FormationState) node(name string) (NodeState, bool) {
	for _, n := range s {
		if n.Name == name {
			return n, true
		}
	}
	return NodeState{}, false
}

// Primary is the node that is primary (or wait_primary: a primary without
// a synchronous standby), if one is.
func (s FormationState) Primary() (NodeState, bool) {
	for _, n := range s {
		if n.Reported == n.Assigned && (n.Reported == "primary" || n.Reported == "wait_primary" || n.Reported == "single") {
			return n, true
		}
	}
	return NodeState{}, false
}

// String is one line per node.
func (s FormationState) String() string {
	var b strings.Builder
	for _, n := range s {
		fmt.Fprintf(&b, "%s 127.0.0.1:%d %s (assigned %s) lsn %s healthy %v\n", n.Name, n.Port, n.Reported, n.Assigned, n.LSN, n.Healthy)
	}
	return b.String()
}

// State reads the monitor's view of the nodes.
func (f *Formation) State(ctx context.Context) (FormationState, error) {
	db, err := sql.Open("pgx", f.monitorAdminURL())
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `select nodename, nodeport, reportedstate::text, goalstate::text,
		coalesce(reportedlsn::text, ''), health = 1 from pgautofailover.node order by nodeid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var st FormationState
	for rows.Next() {
		var n NodeState
		if err := rows.Scan(&n.Name, &n.Port, &n.Reported, &n.Assigned, &n.LSN, &n.Healthy); err != nil {
			return nil, err
		}
		st = append(st, n)
	}
	return st, rows.Err()
}

// Node is the keeper named name.
func (f *Formation) Node(name string) *Keeper {
	for _, n := range f.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Kill kills k's keeper and its PostgreSQL at once, as losing its machine
// would: the server's processes one by one (each is in a session of its
// own: pgcluster.KillServer), then the keeper's process group.
func (f *Formation) Kill(k *Keeper) {
	if k.cmd == nil {
		return
	}
	pgcluster.KillServer(k.PGData)
	_ = syscall.Kill(-k.cmd.Process.Pid, syscall.SIGKILL)
	<-k.exited
	k.cmd = nil
}

// Freeze stops (SIGSTOP) every process of k's node, keeper and PostgreSQL,
// as a hung machine or a partition looks from outside: connections stay
// open, nothing answers, nothing is reset. Thaw resumes them.
func (f *Formation) Freeze(k *Keeper) { f.signalNode(k, syscall.SIGSTOP) }

// Thaw resumes a node that Freeze stopped: the keeper finds its node
// demoted by the monitor and rejoins it as the standby.
func (f *Formation) Thaw(k *Keeper) { f.signalNode(k, syscall.SIGCONT) }

func (f *Formation) signalNode(k *Keeper, sig syscall.Signal) {
	if k.cmd == nil {
		return
	}
	pgcluster.SignalServer(k.PGData, sig)
	_ = syscall.Kill(-k.cmd.Process.Pid, sig)
}

// Restart runs k's keeper again after Kill or Stop: a data node rejoins as
// a standby (pg_rewind, or a new base backup when that fails).
func (f *Formation) Restart(k *Keeper) error {
	if k.Running() {
		return nil
	}
	return f.spawn(k, "run", "--pgdata", k.PGData)
}

// WaitState waits until node name has reached one of states (reported and
// assigned agree).
func (f *Formation) WaitState(ctx context.Context, name string, states ...string) error {
	for {
		st, err := f.State(ctx)
		if err == nil {
			if s, ok := st.node(name); ok && s.Reported == s.Assigned {
				for _, want := range states {
					if s.Reported == want {
						return nil
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pgha: %s did not reach %v: %w (state: %v)", name, states, ctx.Err(), st)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Failover asks the monitor for a controlled failover (pg_autoctl perform
// failover): the standby is promoted and the old primary follows it.
func (f *Formation) Failover(ctx context.Context) error {
	out, err := f.autoctlRun(ctx, "perform", "failover", "--pgdata", f.Monitor.PGData)
	// hapostgres/pg_auto_failover#1033: the command may print an error
	// about get_nodes' arguments and still complete; the state tells.
	if err != nil && !strings.Contains(out, "invalid input syntax for type integer") {
		return err
	}
	return nil
}

// Stop stops the data nodes (the standby first), then the monitor, each
// with pg_autoctl stop (a fast shutdown of its PostgreSQL), killing a
// keeper that has not stopped within a minute. Every node is stopped,
// whoever runs its keeper: one this process started, one an operator ran
// by hand (pg_autoctl finds it by its pid file), and a PostgreSQL whose
// keeper died and left it running (issue 31, finding 4: Ctrl-C printed
// "stopped" while all three servers kept listening).
func (f *Formation) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*keeperStopMax)
	defer cancel()
	order := make([]*Keeper, 0, len(f.Nodes)+1)
	if st, err := f.State(ctx); err == nil {
		if p, ok := st.Primary(); ok {
			for _, n := range f.Nodes {
				if n.Name != p.Name {
					order = append(order, n)
				}
			}
			order = append(order, f.Node(p.Name))
		}
	}
	if len(order) == 0 {
		order = append(order, f.Nodes...)
	}
	order = append(order, f.Monitor)
	for _, k := range order {
		if k != nil {
			f.stopKeeper(ctx, k)
		}
	}
}

// stopKeeper stops k's keeper and makes sure its PostgreSQL is down.
func (f *Formation) stopKeeper(ctx context.Context, k *Keeper) {
	_, _ = f.autoctlRun(ctx, "stop", "--pgdata", k.PGData)
	if k.Running() {
		select {
		case <-k.exited:
		case <-time.After(keeperStopMax):
			f.Kill(k)
		}
	}
	k.cmd = nil
	if !f.serverRunning(ctx, k) {
		return
	}
	// No keeper stopped it: pg_ctl does, then SIGKILL if even that fails.
	sctx, cancel := context.WithTimeout(ctx, keeperStopMax)
	defer cancel()
	cmd := exec.CommandContext(sctx, f.pgctl, "stop", "-D", k.PGData, "-m", "fast", "-w", "-t", "30") //nolint:gosec // our own arguments
	if err := pgcluster.AsServerUser(cmd); err == nil {
		_ = cmd.Run()
	}
	if f.serverRunning(ctx, k) {
		pgcluster.KillServer(k.PGData)
	}
}

// serverRunning reports whether k's PostgreSQL runs (pg_ctl status).
func (f *Formation) serverRunning(ctx context.Context, k *Keeper) bool {
	cmd := exec.CommandContext(ctx, f.pgctl, "status", "-D", k.PGData) //nolint:gosec // our own arguments
	if err := pgcluster.AsServerUser(cmd); err != nil {
		return false
	}
	return cmd.Run() == nil
}

// Dir is the formation's directory.
func (f *Formation) Dir() string { return f.dir }

// LogPath is the log file of k's keeper (and its PostgreSQL's messages).
func (k *Keeper) LogPath() string { return k.log }

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path) //nolint:gosec // our own log file
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
