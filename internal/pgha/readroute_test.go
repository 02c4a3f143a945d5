package pgha_test

// Reads from the standby (database.ReadRoute, DATABASE_READ_URL) on a real
// primary and synchronous standby: a read right after a write sees it —
// served by the standby once it has replayed the write, or by the primary
// when the standby lags past the bound, is down, or is no standby at all
// (docs/ha.md, "Reads from the standby").

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/pgha"
	"github.com/paygate/gateway/internal/pgha/pghatest"
	"github.com/paygate/gateway/ledger"
)

// readRouteFixture is a ledger on a pair's primary with one merchant.
type readRouteFixture struct {
	p        *pgha.Pair
	l        *ledger.Ledger
	merchant int64
	deposits int
	standby  *sql.DB // the standby's postgres database, to pause its replay
}

func newReadRouteFixture(ctx context.Context, t *testing.T) *readRouteFixture {
	t.Helper()
	p := pghatest.StartPair(t)
	if err := p.CreateDatabase(ctx, "gateway"); err != nil {
		t.Fatal(err)
	}
	key := make([]byte, merchant.DataKeyBytes)
	_, _ = rand.Read(key)
	sealer, err := merchant.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	l := openLedger(ctx, t, p.URL("gateway"), sealer)
	m, _, err := merchant.New(l, sealer).CreateMerchant(ctx, merchant.Spec{Name: "Read Shop", Currencies: []string{"USD"}})
	if err != nil {
		t.Fatal(err)
	}
	return &readRouteFixture{p: p, l: l, merchant: m.ID, standby: open(t, p.Standby())}
}

// route attaches a read route to the standby's gateway database.
func (f *readRouteFixture) route(t *testing.T, url string, o database.ReadRouteOptions) *database.ReadRoute {
	t.Helper()
	db, err := database.OpenDBLazy(url, database.DBOptions{ConnsMax: 4})
	if err != nil {
		t.Fatal(err)
	}
	r := database.NewReadRoute(f.l.DB(), db, o)
	f.l.SetReadRoute(r)
	t.Cleanup(func() {
		f.l.SetReadRoute(nil)
		_ = r.Close()
	})
	return r
}

// deposit writes one more bill line and returns how many there are.
func (f *readRouteFixture) deposit(ctx context.Context, t *testing.T) int {
	t.Helper()
	f.deposits++
	if _, err := f.l.Deposit(ctx, f.merchant, "USD", 1_00, &ledger.Idempotency{Scope: ledger.ScopeLedger, Key: fmt.Sprintf("dep-%d", f.deposits)}); err != nil {
		t.Fatal(err)
	}
	return f.deposits
}

// billTotal is the bill's line count as a read through the route sees it.
func (f *readRouteFixture) billTotal(ctx context.Context, t *testing.T) int64 {
	t.Helper()
	page, err := bill.New(f.l).Bill(ctx, f.merchant, time.Unix(0, 0), time.Now().Add(time.Hour), 1, bill.PageMax)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(page.Lines)) != page.Total {
		t.Fatalf("page 1 has %d lines of %d", len(page.Lines), page.Total)
	}
	return page.Total
}

func (f *readRouteFixture) replay(ctx context.Context, t *testing.T, pause bool) {
	t.Helper()
	q := "select pg_wal_replay_resume()"
	if pause {
		q = "select pg_wal_replay_pause()"
	}
	if _, err := f.standby.ExecContext(ctx, q); err != nil {
		t.Fatal(err)
	}
}

// A read right after a write is served by the standby, and sees the write,
// even when the standby had not replayed it when the read began: the read
// waits for the replay. Without the wait the standby (replay paused) would
// answer the older bill.
func TestReadRouteReadsYourWritesFromTheStandby(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), pairTestTimeout)
	defer cancel()
	f := newReadRouteFixture(ctx, t)
	// OnWait never blocks a read: on a loaded machine the first reads may
	// wait too (the standby had not replayed yet), and a second wait must
	// not hang on a full channel.
	waiting := make(chan struct{}, 1)
	r := f.route(t, f.p.Standby().URL("gateway"), database.ReadRouteOptions{
		WaitMax: pairTestTimeout,
		OnWait: func() {
			select {
			case waiting <- struct{}{}:
			default:
			}
		},
	})
	for range 5 {
		n := f.deposit(ctx, t)
		if got := f.billTotal(ctx, t); got != int64(n) {
			t.Fatalf("after %d deposits the bill read through the route has %d lines", n, got)
		}
	}
	before := r.Stats()
	if before.Standby != 5 || before.Lagged+before.Down+before.Promoted != 0 {
		t.Fatalf("5 reads with a healthy standby: %+v, want all 5 served by the standby", before)
	}
	// A wait of those reads (OnWait runs before billTotal returns) left its
	// signal: drop it, or the read below would seem to wait when it was
	// the one before (seen under load: Waited 1 where 2 was due).
	select {
	case <-waiting:
	default:
	}

	f.replay(ctx, t, true)
	n := f.deposit(ctx, t) // acknowledged: flushed on the standby, not replayed
	got := make(chan int64, 1)
	go func() { got <- f.billTotal(ctx, t) }()
	select {
	case <-waiting:
	case total := <-got:
		t.Fatalf("the read returned %d lines without waiting for the paused standby", total)
	case <-ctx.Done():
		t.Fatal("the read never started waiting")
	}
	f.replay(ctx, t, false)
	if total := <-got; total != int64(n) {
		t.Fatalf("the read after deposit %d saw %d lines", n, total)
	}
	if st := r.Stats(); st.Standby != 6 || st.Waited != before.Waited+1 || st.Lagged+st.Down+st.Promoted != 0 {
		t.Fatalf("stats %+v: want 6 standby reads, one of which waited, none elsewhere", st)
	}
}

// A standby whose replay is paused past the bound sends the read to the
// primary, which has the write; so do a standby that cannot be reached and
// a read URL that names a primary. Every read sees every write.
func TestReadRouteFallsBackToThePrimary(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), pairTestTimeout)
	defer cancel()
	f := newReadRouteFixture(ctx, t)
	r := f.route(t, f.p.Standby().URL("gateway"), database.ReadRouteOptions{WaitMax: 50 * time.Millisecond})
	f.deposit(ctx, t)
	f.replay(ctx, t, true)
	defer f.replay(ctx, t, false)
	for range 3 {
		n := f.deposit(ctx, t)
		if got := f.billTotal(ctx, t); got != int64(n) {
			t.Fatalf("lagging standby: after %d deposits the bill has %d lines", n, got)
		}
	}
	if st := r.Stats(); st.Lagged != 3 || st.Standby != 0 {
		t.Fatalf("stats %+v: want 3 reads sent to the primary for lag", st)
	}
	// The batch balance read (QueryRead) and Verify follow the same rule.
	count := ledger.NewStmt("select count(*) from bill_lines where merchant_id = $1")
	var lines int64
	if err := f.l.QueryRead(ctx, count, func(rows pgx.Rows) error {
		for rows.Next() {
			if err := rows.Scan(&lines); err != nil {
				return err
			}
		}
		return nil
	}, f.merchant); err != nil {
		t.Fatal(err)
	}
	if lines != int64(f.deposits) {
		t.Fatalf("QueryRead on a lagging standby counted %d lines, want %d", lines, f.deposits)
	}
	rep, err := audit.New(f.l).Verify(ctx, audit.VerifyOptions{})
	if err != nil || !rep.OK() {
		t.Fatalf("verify through the route: %v %+v", err, rep)
	}
	if st := r.Stats(); st.Lagged != 5 {
		t.Fatalf("stats %+v: want QueryRead and Verify sent to the primary too", st)
	}

	// A standby that cannot be reached: a port nothing listens on.
	ports, err := pgha.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	down := f.route(t, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/gateway?sslmode=disable&connect_timeout=2", ports[0]), database.ReadRouteOptions{})
	n := f.deposit(ctx, t)
	if got := f.billTotal(ctx, t); got != int64(n) {
		t.Fatalf("standby down: %d lines, want %d", got, n)
	}
	if st := down.Stats(); st.Down != 1 || st.Standby != 0 {
		t.Fatalf("stats %+v: want the read sent to the primary, the standby marked down", st)
	}

	// A read URL that names the primary (the standby was promoted).
	promoted := f.route(t, f.p.Primary().URL("gateway"), database.ReadRouteOptions{})
	if got := f.billTotal(ctx, t); got != int64(n) {
		t.Fatalf("read URL on the primary: %d lines, want %d", got, n)
	}
	if st := promoted.Stats(); st.Promoted != 1 || st.Standby != 0 {
		t.Fatalf("stats %+v: want the read URL's primary recognised", st)
	}
}

// Verify and the statement run on the standby, in its snapshot (exported
// there for Verify's helper connections), and agree with the primary.
func TestReadRouteVerifiesOnTheStandby(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), pairTestTimeout)
	defer cancel()
	f := newReadRouteFixture(ctx, t)
	for range 3 {
		f.deposit(ctx, t)
	}
	r := f.route(t, f.p.Standby().URL("gateway"), database.ReadRouteOptions{WaitMax: pairTestTimeout})
	rep, err := audit.New(f.l).Verify(ctx, audit.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Entries < 3 {
		t.Fatalf("verify on the standby: %+v", rep)
	}
	accts, err := audit.New(f.l).StatementAccounts(ctx, f.merchant, time.Unix(0, 0), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var lines int64
	for _, a := range accts {
		lines += a.Lines
	}
	if lines != int64(f.deposits) {
		t.Fatalf("the statement on the standby has %d lines, want %d", lines, f.deposits)
	}
	if st := r.Stats(); st.Standby != 2 {
		t.Fatalf("stats %+v: want Verify and the statement served by the standby", st)
	}
}
