package pgha

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The failover of a Pair: promote the standby, fence a primary, bring the
// old primary back as the new one's synchronous standby.

// Promote makes the standby the primary (pg_promote), whatever became of the
// old primary: the caller crashed or stopped it, or fenced it. The new
// primary commits without a synchronous standby until Rejoin gives it one
// (as pg_auto_failover's wait_primary state does): otherwise every commit
// would wait for a standby that is not there.
func (p *Pair) Promote(ctx context.Context) error {
	s := p.Standby()
	if !s.Running() {
		return fmt.Errorf("pgha: the standby %s is not running", s.Name)
	}
	db, err := s.Open("postgres")
	if err != nil {
		return err
	}
	defer db.Close()
	// ALTER SYSTEM works on a standby (it only writes postgresql.auto.conf):
	// clearing the list before the promotion means no commit of the new
	// primary ever waits for a standby named in a copied configuration.
	for _, q := range []string{"alter system reset synchronous_standby_names", "select pg_reload_conf()"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("pgha: promoting %s: %w", s.Name, err)
		}
	}
	if err := promote(ctx, db); err != nil {
		return fmt.Errorf("pgha: promoting %s: %w", s.Name, err)
	}
	p.primary = 1 - p.primary
	return nil
}

// promoteNudge is how often promote repeats its request.
const promoteNudge = 200 * time.Millisecond

// promote asks the server behind db to leave recovery and waits until it
// has, repeating the request: PostgreSQL 15's startup process, when its WAL
// receiver has just lost the primary, can take a promote request and then
// sleep 5 s more on a wake-up it had already consumed ("received promote
// request", then "waiting for WAL to become available", then 5.0 s of
// nothing, seen in three of four runs after a crash). Each request wakes it
// again.
func promote(ctx context.Context, db *sql.DB) error {
	ctx, cancel := context.WithTimeout(ctx, promoteWaitS*time.Second)
	defer cancel()
	for {
		var inRecovery bool
		if err := db.QueryRowContext(ctx, "select pg_is_in_recovery()").Scan(&inRecovery); err != nil {
			return err
		}
		if !inRecovery {
			return nil
		}
		// wait => false: pg_promote only signals; errors because the
		// promotion finished in between are settled by the next check.
		_, _ = db.ExecContext(ctx, "select pg_promote(false)")
		select {
		case <-ctx.Done():
			return fmt.Errorf("not promoted within %d s: %w", promoteWaitS, ctx.Err())
		case <-time.After(promoteNudge):
		}
	}
}

// Fence makes the primary refuse writes without stopping it
// (default_transaction_read_only), as a primary that is being demoted looks
// to the connections it still has: their writes fail with SQLSTATE 25006.
// When it returns, every session of the primary takes its next transaction
// read-only: it waits on new sessions (openForReload says why; with the
// wait on its own pooled session, TestServeLeavesADemotedPrimary failed in
// CI when a gateway session not yet signalled committed a write).
func (p *Pair) Fence(ctx context.Context) error {
	db, err := p.Primary().openForReload()
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range []string{"alter system set default_transaction_read_only = on", "select pg_reload_conf()"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("pgha: fencing %s: %w", p.Primary().Name, err)
		}
	}
	return waitFor(ctx, db, "select current_setting('default_transaction_read_only') = 'on'")
}

// How Rejoin brought a node back.
const (
	RejoinedByRewind     = "pg_rewind"
	RejoinedByBaseBackup = "pg_basebackup"
)

// Rejoin brings the old primary back as the synchronous standby of the new
// one: it stops it if it still runs, rewinds its data directory to the new
// primary's timeline (pg_rewind, which first runs crash recovery on a
// crashed one) or, when that fails, copies it anew (pg_basebackup), as
// pg_auto_failover does; starts it streaming, and makes it synchronous. It
// says which of the two it took.
func (p *Pair) Rejoin(ctx context.Context) (string, error) {
	old, primary := p.Standby(), p.Primary()
	old.Stop()
	// A fenced node carries default_transaction_read_only in its
	// postgresql.auto.conf; pg_rewind copies the new primary's over it.
	_ = os.Remove(filepath.Join(old.DataDir(), "postmaster.pid")) // left by a crash; the server is gone
	// pg_rewind reads the source's timeline from its control file, which
	// a promoted server updates only at its next checkpoint: without one,
	// pg_rewind finds "the same timeline", rewinds nothing, and the old
	// primary cannot follow the new timeline (PostgreSQL's pg_rewind
	// documentation says the same).
	if err := checkpoint(ctx, primary); err != nil {
		return "", err
	}
	fmt.Fprintf(p.opts.Log, "pgha: %s: pg_rewind from %s\n", old.Name, primary.Name)
	src := fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres sslmode=disable", primary.Port)
	args := []string{"--target-pgdata", old.DataDir(), "--source-server", src}
	if !p.opts.Durable {
		args = append(args, "--no-sync")
	}
	how := RejoinedByRewind
	out, err := output(ctx, "pg_rewind", args...)
	fmt.Fprintf(p.opts.Log, "%s", out)
	if err != nil {
		fmt.Fprintf(p.opts.Log, "pgha: %s: pg_rewind failed (%v); copying it anew from %s\n", old.Name, err, primary.Name)
		how = RejoinedByBaseBackup
		if err := emptyDir(old.DataDir()); err != nil {
			return "", err
		}
		if err := p.baseBackup(ctx, old, primary); err != nil {
			return "", err
		}
	}
	if err := p.startNode(ctx, old, primary); err != nil {
		return "", err
	}
	return how, p.makeSynchronous(ctx, primary, old)
}

// emptyDir removes everything inside dir, keeping dir itself (its owner
// and mode).
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("pgha: %w", err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("pgha: %w", err)
		}
	}
	return nil
}

// walKeepSize is how much WAL every node keeps. The base backup copies it
// to the standby and pg_rewind between them.
const walKeepSize = "256MB"

// keepWAL makes n keep walKeepSize of WAL, in postgresql.auto.conf rather
// than on the command line: pg_rewind runs a crashed node's crash recovery
// in single-user mode with the configuration files alone, and that
// recovery's checkpoint must not recycle the WAL pg_rewind then reads back
// to the last checkpoint before the timelines diverged ("could not find
// previous WAL record", seen without it). It also lets a rewound node catch
// up from the new primary without a replication slot.
func keepWAL(ctx context.Context, n *Node) error {
	db, err := n.Open("postgres")
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range []string{"alter system set wal_keep_size = '" + walKeepSize + "'", "select pg_reload_conf()"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("pgha: %s: %w", n.Name, err)
		}
	}
	return nil
}

// checkpoint runs CHECKPOINT on n.
func checkpoint(ctx context.Context, n *Node) error {
	db, err := n.Open("postgres")
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "checkpoint"); err != nil {
		return fmt.Errorf("pgha: checkpoint on %s: %w", n.Name, err)
	}
	return nil
}
