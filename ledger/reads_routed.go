package ledger

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/database"
)

// The ledger's standby-tolerant reads go through a read route
// (internal/database.ReadRoute, DATABASE_READ_URL) when one is set; the
// route itself, its fence and its wait, are the database package's.

// SetReadRoute sends the standby-tolerant reads (the bill, the statement,
// audit verify, QueryRead) through r. Call it before the ledger serves; nil
// sends them to the primary.
func (l *Ledger) SetReadRoute(r *database.ReadRoute) { l.reads = r }

// ReadRoute is the route SetReadRoute set, or nil.
func (l *Ledger) ReadRoute() *database.ReadRoute { return l.reads }

// ReadConn is a connection for one standby-tolerant read.
func (l *Ledger) ReadConn(ctx context.Context) (bun.Conn, error) {
	if l.reads == nil {
		c, err := l.db.Conn(ctx)
		return c, mapError(err)
	}
	c, err := l.reads.Conn(ctx)
	return c, mapError(err)
}

// ReadPool is the pool for a standby-tolerant read of several connections.
func (l *Ledger) ReadPool(ctx context.Context) (*bun.DB, error) {
	if l.reads == nil {
		return l.db, nil
	}
	p, err := l.reads.Pool(ctx)
	return p, mapError(err)
}

// QueryRead is Query for a read that may be served by the standby
// (SetReadRoute): the batch balance read.
func (l *Ledger) QueryRead(ctx context.Context, s *Stmt, scan func(pgx.Rows) error, args ...any) error {
	conn, err := l.ReadConn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return l.queryOn(ctx, conn, s, scan, args...)
}
