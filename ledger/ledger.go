// Package ledger is the journal core on PostgreSQL: the append-only,
// hash-chained journal, the balances and bill lines derived from it, the
// merchants' heads, idempotency keys, the outbox and the reads of the
// journal. The merchants themselves are internal/merchant's, the bill
// internal/bill's, audit verify internal/audit's. Every change goes through
// the writer (writer.go), one transaction per batch of commands; reads go
// straight to the tables.
//
// It knows no card, hold or remittance: the domains above it (internal/)
// run their commands inside its transaction (Command, Func, Tx) and keep
// their own rows in batch states they register (batchstate.go);
// docs/architecture.md describes the whole.
package ledger

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/database"
)

// Config tunes a Ledger. The zero value is usable.
type Config struct {
	// Now is the clock; tests inject one. Default time.Now.
	Now func() time.Time
	// Shards is the number of writer goroutines; merchants are spread over
	// them. Default one per two CPUs, at least one.
	Shards int
	// BatchMax bounds the commands of one transaction. Default 256.
	BatchMax int
	// BatchesInFlight bounds the batches of one shard in flight at once:
	// one executing, the others waiting for their COMMIT, never two of one
	// merchant (writer.go). Default 1: a shard's batches strictly one
	// after another. 2 overlaps them; on a quiet machine that made batches
	// smaller and cost more CPU per operation than it saved
	// (docs/performance.md, "After the merge, on a quiet machine").
	BatchesInFlight int
	// BatchWindow is how long a shard waits for more commands once it has
	// one. Zero: a batch takes whatever queued while the previous one was
	// committing, which batches under load and adds no latency when idle.
	BatchWindow time.Duration
	// IdempotencyTTL is how long keys are kept. Default 48 hours; never
	// less than 24.
	IdempotencyTTL time.Duration
	// Logger receives the ledger's own log lines. Default: discarded.
	Logger *slog.Logger
	// Domains are the domains the ledger runs, in order: their batch
	// states flush in it, so a domain comes after those whose tables its
	// own reference (domain.go). The app's list is internal/domains.All.
	Domains []Domain
	// BatchTrace, when set, is given what each committed batch sent to
	// PostgreSQL: its round trips and statements with their rows
	// (batchtrace.go). For tests, which hold the writer to a number of
	// statements per batch; it is called on the writer's goroutine.
	BatchTrace func(BatchTrace)
	// CommitTimeout bounds the wait for a COMMIT's answer, below the
	// batch's 20 s: past it the outcome is unknown (503 outcome_unknown,
	// resolved by the Idempotency-Key) and the connection is discarded.
	// Default CommitTimeoutDefault.
	CommitTimeout time.Duration
}

// Ledger is the journal on PostgreSQL.
type Ledger struct {
	db    *bun.DB
	cfg   Config
	log   *slog.Logger
	w     *writer
	ids   *idAllocator
	reads *database.ReadRoute // nil: every read on db (SetReadRoute)
	// kinds are the batch state kinds of Config.Domains, in order, and
	// kindIDs their index; setups the domains' merchant set-ups.
	kinds   []kind
	kindIDs map[StateKind]int
	setups  []MerchantSetup
	// beforeCommit, when set, is called by a batch with its merchants
	// right before its COMMIT. Tests use it to hold a batch there.
	beforeCommit func(merchants []int64)

	hooksMu sync.Mutex
	hooks   []func(committed *CommitInfo)
}

// CommitInfo tells commit hooks what a batch changed, so that workers (the
// callback dispatcher) can wake up at once instead of polling.
type CommitInfo struct {
	Merchants  []int64
	Entries    int
	Events     int
	Deliveries int // callbacks to send: the dispatcher need not look when 0
}

// New starts a ledger on db. Close stops it.
func New(db *bun.DB, cfg Config) *Ledger {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.CommitTimeout == 0 {
		cfg.CommitTimeout = CommitTimeoutDefault
	}
	if cfg.Shards <= 0 {
		// Few shards make big batches: a transaction's fixed cost (lock,
		// loads, flush, commit) is shared by more commands. Measured with
		// 32 clients over HTTPS on 2 cores with the pipelined writer
		// (docs/performance.md, "Fewer shards"): 4 shards gave 3.9
		// commands a transaction and 0.58-0.62 ms of PostgreSQL a transfer,
		// 2 shards 7.9 and 0.39-0.50 ms, 1 shard 15.9 and 0.25 ms, with the
		// highest throughput and the lowest authorization p99. More CPUs
		// get more shards, so that PostgreSQL can run several batches at
		// once.
		cfg.Shards = max(1, runtime.GOMAXPROCS(0)/cpusPerShard)
	}
	if cfg.BatchesInFlight <= 0 {
		cfg.BatchesInFlight = batchesInFlightDefault
	}
	if cfg.BatchMax <= 0 {
		cfg.BatchMax = batchMaxDefault
	}
	if cfg.IdempotencyTTL < 24*time.Hour {
		cfg.IdempotencyTTL = 48 * time.Hour
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	l := &Ledger{db: db, cfg: cfg, log: cfg.Logger, ids: &idAllocator{}}
	l.useDomains(cfg.Domains)
	l.w = newWriter(l)
	return l
}

// Close stops the writer after the batches in progress; queued commands are
// answered with EUNAVAILABLE.
func (l *Ledger) Close() {
	l.w.close()
}

// DB is the underlying database, for the domain packages' reads and the
// statements that run outside the writer.
func (l *Ledger) DB() *bun.DB { return l.db }

// Logger receives the log lines of the ledger and of the services built on
// it.
func (l *Ledger) Logger() *slog.Logger { return l.log }

// OnCommit registers fn to run after every committed batch.
func (l *Ledger) OnCommit(fn func(*CommitInfo)) {
	l.hooksMu.Lock()
	defer l.hooksMu.Unlock()
	l.hooks = append(l.hooks, fn)
}

func (l *Ledger) afterCommit(tx *Tx) {
	l.hooksMu.Lock()
	hooks := l.hooks
	l.hooksMu.Unlock()
	if len(hooks) == 0 {
		return
	}
	info := &CommitInfo{Entries: len(tx.entries), Events: len(tx.outbox), Deliveries: len(tx.deliveries)}
	for id, h := range tx.heads {
		if h.dirty {
			info.Merchants = append(info.Merchants, id)
		}
	}
	for _, fn := range hooks {
		fn(info)
	}
}

// now is the ledger clock in UTC at the database's precision (microseconds).
func (l *Ledger) now() time.Time {
	return l.cfg.Now().UTC().Truncate(time.Microsecond)
}

// Now exposes the ledger clock to the services built on the ledger.
func (l *Ledger) Now() time.Time { return l.now() }

// bg is the context of maintenance work that belongs to no request.
func (l *Ledger) bg() context.Context { return context.Background() }

// idAllocator hands out account ids from the identity sequence in blocks, so
// that a batch creating accounts does not pay a round trip for each.
type idAllocator struct {
	mu   sync.Mutex
	free []int64
}

const idBlock = 128

func (a *idAllocator) next(ctx context.Context, db bun.IDB) (int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.free) == 0 {
		var ids []int64
		err := db.NewRaw(`select nextval(pg_get_serial_sequence('accounts', 'id')) from generate_series(1, ?)`, idBlock).
			Scan(ctx, &ids)
		if err != nil {
			return 0, mapError(err)
		}
		a.free = ids
	}
	id := a.free[0]
	a.free = a.free[1:]
	return id, nil
}
