package pgha_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/paygate/gateway/internal/pgha"
	"github.com/paygate/gateway/internal/pgha/pghatest"
)

// pairTestTimeout bounds a whole pair test: a broken setup fails, it does
// not hang. The normal case takes seconds.
const pairTestTimeout = 3 * time.Minute

func open(t *testing.T, n *pgha.Node) *sql.DB {
	t.Helper()
	db, err := n.Open("postgres")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// commitRow inserts row id in its own transaction under the given
// synchronous_commit level and returns, once COMMIT is acknowledged, the
// transaction's id and the LSN (position in the WAL) just before its commit
// record.
func commitRow(ctx context.Context, db *sql.DB, id int, level string) (xid, before string, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return "", "", err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
	if _, err := tx.ExecContext(ctx, "select set_config('synchronous_commit', $1, true)", level); err != nil {
		return "", "", err
	}
	if _, err := tx.ExecContext(ctx, "insert into acks (id) values ($1)", id); err != nil {
		return "", "", err
	}
	if err := tx.QueryRowContext(ctx, "select pg_current_xact_id()::xid::text, pg_current_wal_insert_lsn()::text").Scan(&xid, &before); err != nil {
		return "", "", err
	}
	return xid, before, tx.Commit()
}

// commitEnd finds the end of transaction xid's commit record in the
// primary's WAL (pg_walinspect): the LSN a synchronous standby must have
// flushed before the commit is acknowledged.
func commitEnd(ctx context.Context, t *testing.T, primary *sql.DB, xid, before string) string {
	t.Helper()
	var end string
	err := primary.QueryRowContext(ctx, `
		select end_lsn::text from pg_get_wal_records_info($1::pg_lsn, pg_current_wal_flush_lsn())
		where resource_manager = 'Transaction' and record_type = 'COMMIT' and xid::text = $2`, before, xid).Scan(&end)
	if err != nil {
		t.Fatalf("the commit record of transaction %s after %s: %v", xid, before, err)
	}
	return end
}

func rowOn(ctx context.Context, t *testing.T, db *sql.DB, id int) bool {
	t.Helper()
	var n int
	if err := db.QueryRowContext(ctx, "select count(*) from acks where id = $1", id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// An acknowledged commit is on the standby: at the moment the client hears
// COMMIT, the standby has already received and flushed the commit record
// (its receive LSN, read first, is at or past the record's end), and once it
// has replayed that far the row reads there. Under remote_apply the row
// reads on the standby at once. And the guarantee is the standby's doing:
// with the standby gone, a commit is not acknowledged (it waits in SyncRep,
// invisible to other sessions) until the standby is back.
func TestAcknowledgedCommitIsOnTheStandby(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), pairTestTimeout)
	defer cancel()
	p := pghatest.StartPair(t)
	primary, standby := open(t, p.Primary()), open(t, p.Standby())
	for _, q := range []string{"create extension pg_walinspect", "create table acks (id int primary key)"} {
		if _, err := primary.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	for id := 1; id <= 5; id++ {
		xid, before, err := commitRow(ctx, primary, id, "on")
		if err != nil {
			t.Fatalf("commit %d: %v", id, err)
		}
		// First what the standby has, right after the acknowledgement;
		// then where the commit record ends.
		var received string
		if err := standby.QueryRowContext(ctx, "select pg_last_wal_receive_lsn()::text").Scan(&received); err != nil {
			t.Fatal(err)
		}
		end := commitEnd(ctx, t, primary, xid, before)
		var has bool
		if err := standby.QueryRowContext(ctx, "select $1::pg_lsn >= $2::pg_lsn", received, end).Scan(&has); err != nil {
			t.Fatal(err)
		}
		if !has {
			t.Fatalf("commit %d (transaction %s) was acknowledged with its record ending at %s, but the standby had received WAL only up to %s",
				id, xid, end, received)
		}
		if err := p.WaitReplay(ctx, end); err != nil {
			t.Fatalf("the standby did not replay up to %s: %v", end, err)
		}
		if !rowOn(ctx, t, standby, id) {
			t.Fatalf("row %d is not on the standby, which replayed past its commit %s", id, end)
		}
	}

	if _, _, err := commitRow(ctx, primary, 100, "remote_apply"); err != nil {
		t.Fatal(err)
	}
	if !rowOn(ctx, t, standby, 100) {
		t.Fatal("a commit acknowledged under remote_apply is not visible on the standby at once")
	}

	// Without its standby the primary does not acknowledge.
	p.Standby().Crash()
	done := make(chan error, 1)
	go func() {
		_, _, err := commitRow(ctx, primary, 200, "on")
		done <- err
	}()
	waitCtx, waitCancel := context.WithTimeout(ctx, time.Minute)
	defer waitCancel()
	for {
		var waiting bool
		if err := primary.QueryRowContext(waitCtx, "select exists (select 1 from pg_stat_activity where wait_event = 'SyncRep')").Scan(&waiting); err != nil {
			t.Fatalf("waiting for the commit to wait for the standby: %v", err)
		}
		if waiting {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("a commit was acknowledged (error %v) while the synchronous standby was down", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if rowOn(ctx, t, primary, 200) {
		t.Fatal("a commit waiting for the standby is already visible to other sessions")
	}
	select {
	case err := <-done:
		t.Fatalf("a commit was acknowledged (error %v) while the synchronous standby was down", err)
	default:
	}
	if err := p.RestartStandby(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the commit that waited for the standby: %v", err)
	}
	if !rowOn(ctx, t, primary, 200) {
		t.Fatal("row 200 is missing after its commit was acknowledged")
	}
}

// A crashed primary's standby is promoted and takes writes at once (without
// a synchronous standby, which it does not have); the old primary rejoins
// through pg_rewind as the new primary's synchronous standby; then the same
// the other way round, which needs the configuration pg_rewind copies
// across not to name a node as its own standby. Nothing acknowledged is
// lost along the way.
func TestPromoteAndRejoin(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), pairTestTimeout)
	defer cancel()
	p := pghatest.StartPair(t)
	db := func(n *pgha.Node) *sql.DB { return open(t, n) }
	if _, err := db(p.Primary()).ExecContext(ctx, "create extension pg_walinspect; create table acks (id int primary key)"); err != nil {
		t.Fatal(err)
	}
	id := 0
	for round := 0; round < 2; round++ {
		old := p.Primary()
		id++
		if _, _, err := commitRow(ctx, db(old), id, "on"); err != nil {
			t.Fatal(err)
		}
		old.Crash()
		if err := p.Promote(ctx); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		primary := db(p.Primary())
		id++
		if _, _, err := commitRow(ctx, primary, id, "on"); err != nil {
			t.Fatalf("round %d: a commit on the promoted standby: %v", round, err)
		}
		how, err := p.Rejoin(ctx)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if how != pgha.RejoinedByRewind {
			t.Errorf("round %d: the old primary came back by %s, want pg_rewind (its log says why)", round, how)
		}
		if p.Standby() != old {
			t.Fatalf("round %d: the old primary %s is not the standby after rejoining", round, old.Name)
		}
		id++
		xid, before, err := commitRow(ctx, primary, id, "on")
		if err != nil {
			t.Fatalf("round %d: a commit after the rejoin: %v", round, err)
		}
		var received string
		if err := db(old).QueryRowContext(ctx, "select pg_last_wal_receive_lsn()::text").Scan(&received); err != nil {
			t.Fatal(err)
		}
		end := commitEnd(ctx, t, primary, xid, before)
		var has bool
		if err := primary.QueryRowContext(ctx, "select $1::pg_lsn >= $2::pg_lsn", received, end).Scan(&has); err != nil || !has {
			t.Fatalf("round %d: the rejoined standby had WAL up to %s when the commit ending at %s was acknowledged (%v)", round, received, end, err)
		}
		var n int
		if err := primary.QueryRowContext(ctx, "select count(*) from acks").Scan(&n); err != nil || n != id {
			t.Fatalf("round %d: %d rows on the primary, want %d (%v)", round, n, id, err)
		}
	}
}

// Fence's contract, which TestServeLeavesADemotedPrimary relies on: when it
// returns, every session opened before it (the gateway's pooled ones) takes
// its next transaction read-only, and a write there fails with 25006. The
// sessions are the oldest on the server, so the postmaster signals them last.
// With Fence's check on its own pooled session it failed under a CPU burner
// (six busy loops on two cores, -count=10), as TestServeLeavesADemotedPrimary
// did in CI; with the check on a new session it passed the same run.
func TestFenceReachesEveryOlderSession(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), pairTestTimeout)
	defer cancel()
	p := pghatest.StartPair(t)
	db := open(t, p.Primary())
	if _, err := db.ExecContext(ctx, "create table acks (id int primary key)"); err != nil {
		t.Fatal(err)
	}
	const sessions = 80
	conns := make([]*sql.Conn, sessions)
	for i := range conns {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	if err := p.Fence(ctx); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, sessions)
	for i, c := range conns {
		go func() {
			_, err := c.ExecContext(ctx, "insert into acks (id) values ($1)", i)
			errs <- err
		}()
	}
	for range conns {
		err := <-errs
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "25006" {
			t.Errorf("a write on a session opened before the fence: %v; want SQLSTATE 25006", err)
		}
	}
}
