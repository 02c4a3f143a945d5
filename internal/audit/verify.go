package audit

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/paygate/gateway/ledger"
)

// Problem is one break of an invariant, named precisely enough to act on.
type Problem struct {
	Check    string `json:"check"`              // which invariant: see the Check* constants
	Merchant int64  `json:"merchant,omitempty"` // the merchant, when it is about one
	Seq      int64  `json:"seq,omitempty"`      // the journal entry, when it is about one
	Account  string `json:"account,omitempty"`  // the account address, when it is about one
	Detail   string `json:"detail"`
}

func (p Problem) String() string {
	s := p.Check
	if p.Merchant != 0 {
		s += fmt.Sprintf(" merchant=%d", p.Merchant)
	}
	if p.Seq != 0 {
		s += fmt.Sprintf(" seq=%d", p.Seq)
	}
	if p.Account != "" {
		s += " account=" + p.Account
	}
	return s + ": " + p.Detail
}

// The invariants Verify checks.
const (
	CheckSequence   = "sequence"    // merchant sequences run 1..n without gaps
	CheckHashChain  = "hash_chain"  // each entry's prev_hash and hash
	CheckBalanced   = "balanced"    // each entry sums to zero per currency, within its merchant
	CheckHead       = "head"        // the journal head matches the last entry
	CheckBalance    = "balance"     // each balance equals the fold of its postings
	CheckNegative   = "negative"    // no constrained balance below zero
	CheckCurrency   = "currency"    // balances of each merchant and currency sum to zero
	CheckBill       = "bill"        // bill lines are exactly the billable posting sides
	CheckBillChain  = "bill_chain"  // balance_after follows from the amounts
	CheckEmptyEntry = "empty_entry" // an entry without postings
	CheckHolds      = "holds"       // each card's held balance is the sum of its open holds
	CheckBillBlocks = "bill_blocks" // the filtered bill's block counts are the bill lines' (sql/0010)
	CheckAccount    = "account"     // an account's address is its identity's, and no two accounts share one

	// Against a checkpoint (checkpoint.go): its signature and root, a
	// journal that ends before it, an entry whose hash is not the one it
	// recorded.
	CheckCheckpointSignature = "checkpoint_signature"
	CheckCheckpointRollback  = "checkpoint_rollback"
	CheckCheckpointDiverged  = "checkpoint_diverged"
	// The journal has no entry although its heads, its accounts or the
	// checkpoint say it had: one problem instead of one per account.
	CheckJournalEmptied = "journal_emptied"
)

// Report is the outcome of Verify.
type Report struct {
	Merchants       int64     `json:"merchants"`
	Entries         int64     `json:"entries"`
	Postings        int64     `json:"postings"`
	Problems        []Problem `json:"problems"`        // never nil: [] in JSON when none
	ProblemsOmitted int64     `json:"problemsOmitted"` // beyond ProblemsMax
	Elapsed         string    `json:"elapsed"`
	// Heads are the journal heads of the snapshot checked, in merchant
	// order: what an auditor records to compare with next time.
	Heads []CheckpointHead `json:"heads"`
	// Checkpoint names the checkpoint the journal was checked against.
	Checkpoint *CheckpointRef `json:"checkpoint,omitempty"`
}

// CheckpointRef names a checkpoint in a report.
type CheckpointRef struct {
	Time     time.Time `json:"time"`
	KeyID    string    `json:"keyId"`
	TreeSize int       `json:"treeSize"`
	Root     string    `json:"root"`
}

// OK reports whether no invariant is broken.
func (r *Report) OK() bool { return len(r.Problems) == 0 && r.ProblemsOmitted == 0 }

// ProblemsMax bounds the problems a report lists; the rest are counted.
const ProblemsMax = 1000

func (r *Report) add(p Problem) {
	if len(r.Problems) >= ProblemsMax {
		r.ProblemsOmitted++
		return
	}
	r.Problems = append(r.Problems, p)
}

// problemList collects the problems of one check, bounded like a Report:
// each check collects apart (they run concurrently) and Verify merges them
// in a fixed order, which lists and counts exactly what adding them one by
// one would.
type problemList struct {
	list    []Problem
	omitted int64
}

// count is how many problems were added.
func (l *problemList) count() int64 { return int64(len(l.list)) + l.omitted }

func (l *problemList) add(p Problem) {
	if len(l.list) >= ProblemsMax {
		l.omitted++
		return
	}
	l.list = append(l.list, p)
}

func (r *Report) merge(l problemList) {
	for _, p := range l.list {
		r.add(p)
	}
	r.ProblemsOmitted += l.omitted
}

// VerifyOptions narrow Verify.
type VerifyOptions struct {
	Merchant int64 // 0: every merchant
	// Progress is called now and then with the entries checked so far and
	// the total to check, always from the same goroutine.
	Progress func(done, total int64)

	// Checkpoint, when set, is checked with PublicKey (checkpoint.go) and
	// the journal must extend it.
	Checkpoint *Checkpoint
	PublicKey  ed25519.PublicKey

	hooks *verifyHooks // tests only: see verify_export_test.go
}

// verifyHooks let tests act at the points where concurrency matters.
type verifyHooks struct {
	afterSnapshot func()                      // the snapshot is taken, nothing read yet
	beforeCheck   func(conn int, name string) // conn 0 is the stream's
	helpers       *int                        // overrides verifyHelpers
	helpersOnly   bool                        // the stream's connection runs no check while a helper can
	exportFails   bool                        // pg_export_snapshot fails, as on a server that cannot export
	fetchRows     int                         // overrides verifyFetchRows
	accountsMax   int                         // overrides accountsCachedMax
	chainMax      int                         // overrides chainAccountsMax
	chainQueried  func()                      // the balance_after chain is left to the query
	balanceMax    int                         // overrides balanceAccountsMax
	balanceQuery  func()                      // the balance comparison is left to the query
}

// verifyHelpers is how many connections besides the stream's run the
// checks of verifyChecks. The stream keeps its connection's backend and the
// verify process busy; the checks keep one more backend busy, and the
// stream's connection takes what is left once the journal is hashed. On
// the 2-core bench machine a second helper changed nothing (5.8-6.4 s
// against 6.0-6.2 s for a million entries) but a connection more.
const verifyHelpers = 1

// Verify recomputes everything derived from the journal and reports what
// does not match: sequences, hash chains, the balance of each entry, the
// heads, the balances table, the bill lines, the holds. It reads one
// consistent snapshot and streams the journal: entries, postings and bill
// lines, each table in its index's order, merged by key in Go, with no
// join for the planner to choose (issue 17). Memory is bounded whatever
// the journal's size: a batch per table, and caches and folds of at most
// a fixed number of accounts, beyond which the same checks are queries.
//
// The journal is streamed and hashed on one connection while the checks of
// the tables it does not stream run on another one in the same snapshot
// (pg_export_snapshot, then SET TRANSACTION SNAPSHOT): both see exactly
// the same database. When no second connection is to be had (a pool of one)
// or the server cannot export a snapshot, everything runs on the one
// connection, one part after the other.
//
// The problems are reported in a fixed order: the stream's (sequences,
// hashes, entries, heads), the bill lines', the accounts' (balance,
// negative, receivable, currency), the holds', the balance_after chains'.
func (s *Service) Verify(ctx context.Context, opts VerifyOptions) (*Report, error) {
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The standby when DATABASE_READ_URL is set and it has replayed what
	// the primary had committed (readroute.go).
	db, err := s.l.ReadPool(ctx)
	if err != nil {
		return nil, err
	}
	v := &verifyRun{log: s.log, db: db, opts: opts, cancel: cancel, results: make([]problemList, len(verifyChecks))}
	v.stream.merchant, v.stream.progress = opts.Merchant, opts.Progress
	if opts.Checkpoint != nil {
		v.stream.cp = newCheckpointFollower(opts.Checkpoint, opts.Merchant)
	}
	v.stream.closePub = opts.PublicKey // the closes' signatures too (close_verify.go)
	if h := opts.hooks; h != nil {
		v.stream.fetchRows, v.stream.acc.max, v.stream.follow.max = h.fetchRows, h.accountsMax, h.chainMax
		v.stream.follow.queried = h.chainQueried
		v.stream.fold.max, v.stream.fold.queried = h.balanceMax, h.balanceQuery
	}
	if err := withPgxConn(ctx, ctx, db, v.main); err != nil {
		if first := v.err(); first != nil {
			return nil, first
		}
		return nil, err
	}
	rep := &Report{Merchants: v.merchants, Entries: v.stream.entries, Postings: v.stream.postings,
		Problems: []Problem{}, Heads: v.heads}
	if c := opts.Checkpoint; c != nil {
		rep.Checkpoint = &CheckpointRef{Time: c.Time.Time, KeyID: c.KeyID, TreeSize: c.TreeSize, Root: c.Root}
		for _, p := range c.Check(opts.PublicKey) {
			rep.add(p)
		}
	}
	if v.emptied != "" {
		// Everything else follows from it: one problem, the rest counted.
		rep.add(Problem{Check: CheckJournalEmptied, Merchant: opts.Merchant, Detail: v.emptied})
		rep.Elapsed = time.Since(start).Round(time.Millisecond).String()
		return rep, nil
	}
	rep.merge(v.stream.problems)
	if v.stream.cp != nil {
		rep.merge(v.stream.cp.problems)
	}
	if v.stream.closes != nil {
		rep.merge(v.stream.closes.problems)
	}
	rep.merge(v.stream.bill)
	a := &v.stream.accounts
	for _, ps := range []problemList{a.balance, a.negative, a.receivable, a.currency} {
		rep.merge(ps)
	}
	for _, ps := range v.results {
		rep.merge(ps)
	}
	rep.merge(v.stream.follow.problems)
	rep.Elapsed = time.Since(start).Round(time.Millisecond).String()
	return rep, nil
}

// verifyRun is one Verify: the stream on the main connection, the checks
// on whichever connection takes them first.
type verifyRun struct {
	log       *slog.Logger
	db        *bun.DB // the primary's pool or the standby's
	opts      VerifyOptions
	cancel    context.CancelFunc
	merchants int64
	heads     []CheckpointHead // the snapshot's, for the report
	emptied   string           // why the journal is known to have had entries, when it has none
	stream    chainStream
	results   []problemList // by index of verifyChecks

	mu       sync.Mutex
	firstErr error
}

// fail records the first error and stops the other connections.
func (v *verifyRun) fail(err error) {
	v.mu.Lock()
	if v.firstErr == nil {
		v.firstErr = err
	}
	v.mu.Unlock()
	v.cancel()
}

func (v *verifyRun) err() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.firstErr
}

// main runs on the stream's connection: it takes the snapshot, starts the
// helpers, streams the journal, then takes the checks no helper has started.
func (v *verifyRun) main(ctx context.Context, conn *pgx.Conn) error {
	if err := beginVerifyTx(ctx, conn, ""); err != nil {
		return err
	}
	defer endVerifyTx(conn)
	helpers := v.helpers()
	var snapshot string
	if helpers > 0 {
		var err error
		if snapshot, err = exportSnapshot(ctx, conn, v.opts.hooks != nil && v.opts.hooks.exportFails); err != nil {
			// A standby, say: one connection does it all.
			v.log.Info("audit verify: no snapshot to share; checking on one connection", "error", err)
			endVerifyTx(conn)
			if err := beginVerifyTx(ctx, conn, ""); err != nil {
				return err
			}
			helpers = 0
		}
	}
	if h := v.opts.hooks; h != nil && h.afterSnapshot != nil {
		h.afterSnapshot()
	}
	heads, err := loadHeads(ctx, conn, v.opts.Merchant)
	if err != nil {
		return err
	}
	v.merchants = int64(len(heads))
	v.heads = reportHeads(heads)
	v.stream.heads = heads
	if v.stream.position, err = loadBillPosition(ctx, conn, v.opts.Merchant); err != nil {
		return err
	}
	v.stream.billHeads = make(map[int64]int64, len(heads))
	for m, h := range heads {
		v.stream.total += h.seq // the progress bar's total, without counting the journal
		v.stream.billHeads[m] = h.billSeq
	}

	queue := make(chan int, len(verifyChecks))
	for _, i := range verifyCheckOrder() {
		queue <- i
	}
	close(queue)
	acquire, stopAcquiring := context.WithCancel(ctx)
	defer stopAcquiring()
	var wg sync.WaitGroup
	// Every helper has imported the snapshot or given up before this
	// transaction, which exports it, ends.
	defer wg.Wait()
	for id := 1; id <= helpers; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v.helper(ctx, acquire, snapshot, queue, id)
		}()
	}

	if err := v.stream.run(ctx, conn); err != nil {
		v.fail(err)
		return err
	}
	if v.stream.entries == 0 {
		if v.emptied, err = emptiedEvidence(ctx, conn, v.opts, v.heads); err != nil {
			v.fail(err)
			return err
		}
	}
	if h := v.opts.hooks; h != nil && h.helpersOnly {
		wg.Wait()
	}
	// The stream's connection is in the same snapshot: it takes whatever
	// check no helper has started, and a helper still waiting for a
	// connection from the pool is not needed any more.
	if err := v.drain(ctx, conn, queue, 0); err != nil {
		v.fail(err)
		return err
	}
	stopAcquiring()
	wg.Wait()
	return v.err()
}

// helpers is how many helper connections to use: none when the pool
// cannot have two open at once.
func (v *verifyRun) helpers() int {
	n := verifyHelpers
	if h := v.opts.hooks; h != nil && h.helpers != nil {
		n = *h.helpers
	}
	if open := v.db.DB.Stats().MaxOpenConnections; open > 0 {
		n = min(n, open-1)
	}
	return max(n, 0)
}

// helper runs checks on a connection of its own in the exported snapshot.
// If it gets no connection before the stream's connection has taken every
// check, or cannot import the snapshot, it does nothing: the stream's
// connection does the checks.
func (v *verifyRun) helper(ctx, acquire context.Context, snapshot string, queue <-chan int, id int) {
	c, err := v.db.DB.Conn(acquire)
	if err != nil {
		return
	}
	defer c.Close()
	conn, err := ledger.PgxConn(c)
	if err != nil {
		v.fail(err)
		return
	}
	if err := beginVerifyTx(ctx, conn, snapshot); err != nil {
		endVerifyTx(conn)
		if ctx.Err() == nil {
			v.log.Info("audit verify: a helper connection could not import the snapshot", "error", err)
		}
		return
	}
	defer endVerifyTx(conn)
	if err := v.drain(ctx, conn, queue, id); err != nil {
		v.fail(err)
	}
}

// drain runs checks from the queue until it is empty.
func (v *verifyRun) drain(ctx context.Context, conn *pgx.Conn, queue <-chan int, id int) error {
	for i := range queue {
		c := &verifyChecks[i]
		if h := v.opts.hooks; h != nil && h.beforeCheck != nil {
			h.beforeCheck(id, c.name)
		}
		ps, err := c.run(ctx, conn, v.opts.Merchant)
		if err != nil {
			return fmt.Errorf("ledger: verify %s: %w", c.name, err)
		}
		v.results[i] = ps
	}
	return nil
}

// verifyCheckOrder is the order the checks are taken in: the longest first,
// so that the connections finish together.
func verifyCheckOrder() []int {
	order := make([]int, len(verifyChecks))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return verifyChecks[b].cost - verifyChecks[a].cost })
	return order
}

// snapshotIDPattern is what pg_export_snapshot returns ("00000003-0000001B-1"):
// SET TRANSACTION SNAPSHOT takes no parameter, so the text is checked before
// it is written into the statement.
var snapshotIDPattern = regexp.MustCompile(`^[0-9A-F]+-[0-9A-F]+(-[0-9]+)?$`)

func exportSnapshot(ctx context.Context, conn *pgx.Conn, fail bool) (string, error) {
	q := `select pg_export_snapshot()`
	if fail {
		q = `select pg_export_snapshot_refused()` // an error that aborts the transaction, as a refusal would
	}
	var id string
	if err := conn.QueryRow(ctx, q).Scan(&id); err != nil {
		return "", err
	}
	if !snapshotIDPattern.MatchString(id) {
		return "", fmt.Errorf("unexpected snapshot identifier %q", id)
	}
	return id, nil
}

// beginVerifyTx starts the read-only snapshot transaction of Verify on conn,
// in the given exported snapshot or in a new one.
func beginVerifyTx(ctx context.Context, conn *pgx.Conn, snapshot string) error {
	q := `begin isolation level repeatable read read only`
	if snapshot != "" {
		if !snapshotIDPattern.MatchString(snapshot) {
			return fmt.Errorf("ledger: verify: bad snapshot identifier %q", snapshot)
		}
		q += `; set transaction snapshot '` + snapshot + `'`
	}
	// One snapshot of a journal of millions of entries takes longer than
	// the statement time-out meant for requests; the scan is read-only and
	// bounded by the journal's size, so it gets its own limit.
	q += `; set local statement_timeout = '2h'`
	// Verify runs its own parts side by side (the stream, the checks); the
	// parallel workers PostgreSQL would add to the folds (balances, bill
	// sides) cost more CPU than they save time: on the bench's million
	// entries, PostgreSQL's CPU went from 7.7-8.1 s to 6.2-6.3 s without
	// them, and the wall time did not grow. An audit beside a live gateway
	// should take no more of the server than it needs.
	q += `; set local max_parallel_workers_per_gather = 0`
	// The folds hash or sort every posting side; with the default 4 MB
	// they spill to disk once the journal holds many accounts (the full
	// bench: 28 s instead of 4-10 s). A bounded, larger work_mem keeps
	// them in memory for one read-only session.
	q += `; set local work_mem = '128MB'`
	// The journal is read as probes, one per entry, posting and bill line
	// (verify_stream.go, verify_checks.go), each key different from the
	// last: PostgreSQL may still put a Memoize cache in front of a probe,
	// which misses every time and holds up to work_mem of keys (the stream
	// of 300,000 entries: 4.5 s with it, 2.6 s without).
	q += `; set local enable_memoize = off`
	_, err := conn.Exec(ctx, q)
	return ledger.MapError(err)
}

// endVerifyTx ends the transaction, whatever state it is in; a connection
// that cannot is closed, and the pool drops it.
func endVerifyTx(conn *pgx.Conn) {
	if conn.IsClosed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := conn.Exec(ctx, `rollback`); err != nil {
		_ = conn.Close(ctx)
	}
}

// withPgxConn runs fn on a pool connection of its own, as pgx: the journal
// is read with pgx's binary rows rather than database/sql's scanning, and
// the connection keeps the pool's settings (TLS, time-outs, time zone). It
// is acquired with acquire and used with the context fn is given.
func withPgxConn(ctx, acquire context.Context, db *bun.DB, fn func(context.Context, *pgx.Conn) error) error {
	c, err := db.DB.Conn(acquire)
	if err != nil {
		return ledger.MapError(err)
	}
	defer c.Close()
	conn, err := ledger.PgxConn(c)
	if err != nil {
		return err
	}
	return fn(ctx, conn)
}
