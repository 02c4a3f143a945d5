// Package database holds what the gateway does with its PostgreSQL pools
// below the journal: the routing of standby-tolerant reads.
package database

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"
)

// Reads from a standby (DATABASE_READ_URL, docs/ha.md "Reads from the
// standby"). The reads that scan much and change nothing — the bill and its
// CSV export, the statement, audit verify, the batch balance read — may be
// served by a hot standby, and are when it is fresh enough.
//
// The rule, which gives read-your-writes without remembering anything per
// merchant: before such a read, the primary is asked for its current WAL
// position (pg_current_wal_lsn(), the fence: one round trip, no table), and
// the read runs on the standby only once the standby has replayed up to the
// fence. Everything any client was told was committed before the read began
// (on this gateway or another one) is before the fence, so the read sees it:
// a merchant never reads an older state than it was told. The standby is
// waited for at most WaitMax; past it, or when the standby cannot be
// reached, or when the server behind the read URL is not in recovery (it was
// promoted, or the URL names a primary), the read goes to the primary. The
// staleness bound is therefore zero with respect to the moment the read
// began; what the standby's lag costs is latency, at most WaitMax.
//
// Why not the merchant's last commit LSN: the gateway runs as several
// instances, and a merchant's write and its next read may reach different
// ones; a per-merchant LSN would have to live in the database (written
// after each commit: a round trip on every write), while the fence costs one
// round trip on the reads that use the standby only.

// ReadRouteOptions tune a ReadRoute.
type ReadRouteOptions struct {
	// WaitMax bounds the wait for the standby to replay the fence; past
	// it the read goes to the primary. Default ReadWaitMaxDefault; negative
	// means do not wait (read the standby only if it is already there).
	WaitMax time.Duration
	// DownFor is how long a standby that failed (could not be reached) is
	// not asked again. Default 2 s.
	DownFor time.Duration
	// OnWait, when set, is called when a read starts waiting for the
	// standby (tests use it to let replay go on at that moment).
	OnWait func()
}

// ReadWaitMaxDefault is ReadRouteOptions.WaitMax's default: replay on a
// synchronous standby follows the flush by milliseconds (docs/ha.md
// measures it); a quarter second covers a busy machine, and a read that
// would wait longer is better served by the primary.
const ReadWaitMaxDefault = 250 * time.Millisecond

// readPollMax caps the interval between two looks at the standby's replay
// position; the first look is immediate and the interval doubles from
// readPollMin.
const (
	readPollMin = 500 * time.Microsecond
	readPollMax = 16 * time.Millisecond
)

// ReadRoute chooses, for each read that may use it, the standby or the
// primary. It is safe for concurrent use.
type ReadRoute struct {
	primary, standby *bun.DB
	opts             ReadRouteOptions
	downUntil        atomic.Int64 // unix nanoseconds
	stats            struct {
		standby, waited, lagged, down, promoted atomic.Int64
	}
}

// ReadRouteStats count where the routed reads went.
type ReadRouteStats struct {
	Standby  int64 // served by the standby
	Waited   int64 // of those, how many waited for its replay first
	Lagged   int64 // sent to the primary: the standby had not replayed the fence within WaitMax
	Down     int64 // sent to the primary: the standby could not be reached (or was marked down)
	Promoted int64 // sent to the primary: the read URL's server is not in recovery
}

// NewReadRoute routes reads between primary (the writer's pool) and standby
// (a pool on DATABASE_READ_URL).
func NewReadRoute(primary, standby *bun.DB, o ReadRouteOptions) *ReadRoute {
	if o.WaitMax == 0 {
		o.WaitMax = ReadWaitMaxDefault
	}
	if o.DownFor <= 0 {
		o.DownFor = 2 * time.Second
	}
	return &ReadRoute{primary: primary, standby: standby, opts: o}
}

// Stats are the counts so far.
func (r *ReadRoute) Stats() ReadRouteStats {
	return ReadRouteStats{
		Standby: r.stats.standby.Load(), Waited: r.stats.waited.Load(), Lagged: r.stats.lagged.Load(),
		Down: r.stats.down.Load(), Promoted: r.stats.promoted.Load(),
	}
}

// Standby is the standby's pool.
func (r *ReadRoute) Standby() *bun.DB { return r.standby }

// Close closes the standby's pool (the primary's belongs to its owner).
func (r *ReadRoute) Close() error { return r.standby.Close() }

// Conn returns a connection for one read: on the standby once it has
// replayed the fence, else on the primary. The caller closes it. Errors are
// the driver's: the caller maps them (ledger.MapError).
func (r *ReadRoute) Conn(ctx context.Context) (bun.Conn, error) {
	fence, err := r.fence(ctx)
	if err != nil {
		return bun.Conn{}, err
	}
	if c, ok := r.standbyConn(ctx, fence); ok {
		return c, nil
	}
	return r.primary.Conn(ctx)
}

// Pool returns the pool for a read that takes several connections (Verify):
// the standby's when one of its connections has replayed the fence. The
// read URL names one server (docs/ha.md), so every connection of its pool
// has replayed at least as far.
func (r *ReadRoute) Pool(ctx context.Context) (*bun.DB, error) {
	fence, err := r.fence(ctx)
	if err != nil {
		return nil, err
	}
	if c, ok := r.standbyConn(ctx, fence); ok {
		_ = c.Close()
		return r.standby, nil
	}
	return r.primary, nil
}

// fence is the primary's current WAL position. A primary that cannot answer
// fails the read as it would fail any other (503): the standby alone cannot
// tell whether it has everything a client was told.
func (r *ReadRoute) fence(ctx context.Context) (string, error) {
	var lsn string
	if err := r.primary.NewRaw("select pg_current_wal_lsn()::text").Scan(ctx, &lsn); err != nil {
		return "", err
	}
	return lsn, nil
}

// standbyConn returns a standby connection that has replayed fence, waiting
// at most WaitMax for it.
func (r *ReadRoute) standbyConn(ctx context.Context, fence string) (bun.Conn, bool) {
	if time.Now().UnixNano() < r.downUntil.Load() {
		r.stats.down.Add(1)
		return bun.Conn{}, false
	}
	c, err := r.standby.Conn(ctx)
	if err != nil {
		r.markDown()
		return bun.Conn{}, false
	}
	deadline := time.Now().Add(r.opts.WaitMax)
	poll := readPollMin
	for waited := false; ; waited = true {
		var inRecovery, replayed bool
		err := c.NewRaw("select pg_is_in_recovery(), coalesce(pg_last_wal_replay_lsn() >= ?::pg_lsn, false)", fence).
			Scan(ctx, &inRecovery, &replayed)
		switch {
		case err != nil:
			_ = c.Close()
			if ctx.Err() == nil {
				r.markDown()
			}
			return bun.Conn{}, false
		case !inRecovery:
			_ = c.Close()
			r.stats.promoted.Add(1)
			return bun.Conn{}, false
		case replayed:
			r.stats.standby.Add(1)
			if waited {
				r.stats.waited.Add(1)
			}
			return c, true
		}
		if !waited && r.opts.OnWait != nil {
			r.opts.OnWait()
		}
		if time.Now().Add(poll).After(deadline) {
			_ = c.Close()
			r.stats.lagged.Add(1)
			return bun.Conn{}, false
		}
		select {
		case <-ctx.Done():
			_ = c.Close()
			return bun.Conn{}, false
		case <-time.After(poll):
		}
		poll = min(2*poll, readPollMax)
	}
}

func (r *ReadRoute) markDown() {
	r.stats.down.Add(1)
	r.downUntil.Store(time.Now().Add(r.opts.DownFor).UnixNano())
}
