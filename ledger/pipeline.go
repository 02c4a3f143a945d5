package ledger

import (
	"context"
	"fmt"
	"hash/fnv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// The writer talks to PostgreSQL in few round trips and with few plans
// (docs/performance.md): its frequent statements have a fixed text with
// array parameters, are prepared once per connection and planned once
// (PostgreSQL keeps a generic plan for a prepared statement), and the
// statements of one phase of a batch transaction — the loads after the head
// lock, the flush — travel together as one pipeline: one round trip, one
// Sync, PostgreSQL running them in order and skipping the rest after the
// first error.
//
// Everything else in the package keeps bun's interpolated queries and the
// simple protocol (ledger/db.go): those are rare or read-only.

// Stmt is a statement with a fixed text, prepared on each connection the
// first time it is used there. The domain packages make theirs with NewStmt
// too, so that the writer runs them in its pipelines and one test checks
// every plan.
type Stmt struct {
	name string
	sql  string
}

// stmtsAll lists every statement made by NewStmt, so that a test can check
// each one's generic plan (TestStatementPlansAreIndexProbes).
var stmtsAll []*Stmt

// NewStmt registers a statement. Call it at package level (a var), so that
// every statement of the program exists before the first batch. Its text
// must plan as index probes whatever the statistics (docs/performance.md).
func NewStmt(sql string) *Stmt {
	h := fnv.New64a()
	h.Write([]byte(sql))
	s := &Stmt{name: fmt.Sprintf("gw_%016x", h.Sum64()), sql: sql}
	stmtsAll = append(stmtsAll, s)
	return s
}

// Statement is one registered statement, for the test of the plans.
type Statement struct{ Name, SQL string }

// Statements returns every statement registered with NewStmt by the
// packages linked into the program.
func Statements() []Statement {
	out := make([]Statement, len(stmtsAll))
	for i, s := range stmtsAll {
		out[i] = Statement{s.name, s.sql}
	}
	return out
}

// PgxConn returns the pgx connection under a pinned database/sql
// connection (a *sql.Conn or a bun.Conn). The caller holds c exclusively
// until it closes it, and uses the two in turn, never at once, so the pgx
// connection is used only while database/sql is not using it.
func PgxConn(c interface{ Raw(func(any) error) error }) (*pgx.Conn, error) {
	var pc *pgx.Conn
	err := c.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("ledger: driver connection is %T, not pgx", dc)
		}
		pc = sc.Conn()
		return nil
	})
	return pc, err
}

// Pipeline collects statements to send in one round trip. Each statement has
// a reader for its result, called in order once the pipeline is sent.
type Pipeline struct {
	ctx     context.Context
	pc      *pgx.Conn
	db      *bun.DB // builds and renders bun queries queued with bunExec
	batch   pgconn.Batch
	readers []func(*pgconn.ResultReader) error
	err     error // the first error while queueing; send returns it
	// trace, when not nil, records what is sent (batchtrace.go), with
	// the start of each statement's text.
	trace  *BatchTrace
	labels []string
}

// Limits of one pipeline: the statements of a flush are one per table (about
// twenty at most), so a pipeline longer than this is a bug.
const pipelineStatementsMax = 64

func newPipeline(ctx context.Context, pc *pgx.Conn, db *bun.DB) *Pipeline {
	return &Pipeline{ctx: ctx, pc: pc, db: db}
}

// DB builds the bun queries queued with BunExec (rendered to text, for the
// rare tables).
func (p *Pipeline) DB() *bun.DB { return p.db }

func (p *Pipeline) queuePrepared(s *Stmt, args []any, read func(*pgconn.ResultReader) error) {
	if p.err != nil {
		return
	}
	if len(p.readers) >= pipelineStatementsMax {
		p.err = fmt.Errorf("ledger: pipeline longer than %d statements", pipelineStatementsMax)
		return
	}
	// Prepare costs a round trip only the first time on this connection.
	sd, err := p.pc.Prepare(p.ctx, s.name, s.sql)
	if err != nil {
		p.err = err
		return
	}
	// One builder per statement: a builder reuses its buffers, and the
	// batch keeps references to them until it is sent.
	var eqb pgx.ExtendedQueryBuilder
	if err := eqb.Build(p.pc.TypeMap(), sd, args); err != nil {
		p.err = fmt.Errorf("ledger: encoding the arguments of %s: %w", s.name, err)
		return
	}
	p.batch.ExecPrepared(sd.Name, eqb.ParamValues, eqb.ParamFormats, eqb.ResultFormats)
	p.readers = append(p.readers, read)
	if p.trace != nil {
		p.labels = append(p.labels, traceLabel(s.sql))
	}
}

// Exec queues a prepared statement; check (if not nil) receives its
// command tag.
func (p *Pipeline) Exec(s *Stmt, check func(pgconn.CommandTag) error, args ...any) {
	p.queuePrepared(s, args, func(rr *pgconn.ResultReader) error {
		tag, err := rr.Close()
		if err != nil || check == nil {
			return err
		}
		return check(tag)
	})
}

// ExecRows queues a prepared statement that must change exactly n rows.
func (p *Pipeline) ExecRows(s *Stmt, n int, what string, args ...any) {
	p.Exec(s, RowsCheck(n, what), args...)
}

// RowsCheck is a check that a statement changed exactly n rows.
func RowsCheck(n int, what string) func(pgconn.CommandTag) error {
	return func(tag pgconn.CommandTag) error {
		if tag.RowsAffected() != int64(n) {
			return Invariantf("%d %s written, %d expected", tag.RowsAffected(), what, n)
		}
		return nil
	}
}

// Query queues a prepared statement whose rows go to scan.
func (p *Pipeline) Query(s *Stmt, scan func(pgx.Rows) error, args ...any) {
	p.queuePrepared(s, args, func(rr *pgconn.ResultReader) error {
		rows := pgx.RowsFromResultReader(p.pc.TypeMap(), rr)
		defer rows.Close()
		if err := scan(rows); err != nil {
			return err
		}
		rows.Close()
		return rows.Err()
	})
}

// Text queues a statement without parameters (a bun query rendered to text,
// for the rare tables). check (if not nil) receives its command tag.
func (p *Pipeline) Text(sql string, check func(pgconn.CommandTag) error) {
	if p.err != nil {
		return
	}
	p.batch.ExecParams(sql, nil, nil, nil, nil)
	if p.trace != nil {
		p.labels = append(p.labels, traceLabel(sql))
	}
	p.readers = append(p.readers, func(rr *pgconn.ResultReader) error {
		tag, err := rr.Close()
		if err != nil || check == nil {
			return err
		}
		return check(tag)
	})
}

// BunExec queues a bun query, rendered to text with its arguments.
func (p *Pipeline) BunExec(q schema.QueryAppender, check func(pgconn.CommandTag) error) {
	if p.err != nil {
		return
	}
	b, err := q.AppendQuery(p.db.Formatter(), nil)
	if err != nil {
		p.err = err
		return
	}
	p.Text(string(b), check)
}

// Send sends the pipeline and reads every result in order. It returns the
// first error: PostgreSQL skips the statements after a failed one, and the
// transaction is then aborted.
func (p *Pipeline) Send() error {
	if p.err != nil {
		return mapError(p.err)
	}
	if len(p.readers) == 0 {
		return nil
	}
	mrr := p.pc.PgConn().ExecBatch(p.ctx, &p.batch)
	var first error
	read := 0
	var tags []pgconn.CommandTag
	for _, r := range p.readers {
		if !mrr.NextResult() {
			break
		}
		read++
		if err := r(mrr.ResultReader()); err != nil && first == nil {
			first = err
		}
		if p.trace != nil {
			// A closed reader answers its tag again.
			tag, _ := mrr.ResultReader().Close()
			tags = append(tags, tag)
		}
	}
	if p.trace != nil {
		p.trace.traceSent(p.labels, tags)
	}
	if err := mrr.Close(); err != nil && first == nil {
		first = err
	}
	if first == nil && read != len(p.readers) {
		// Without an error every statement has its result.
		first = fmt.Errorf("ledger: pipeline of %d statements returned %d results", len(p.readers), read)
	}
	return mapError(first)
}

// withPrepared hands fn a pooled connection on which s is prepared (a
// round trip only the first time on that connection): the read paths that
// run at every request are parsed and planned once per connection.
func (l *Ledger) withPrepared(ctx context.Context, s *Stmt, fn func(pc *pgx.Conn) error) error {
	conn, err := l.db.Conn(ctx)
	if err != nil {
		return mapError(err)
	}
	defer conn.Close()
	return withPreparedOn(ctx, conn, s, fn)
}

// withPreparedOn is withPrepared on a connection the caller holds.
func withPreparedOn(ctx context.Context, conn bun.Conn, s *Stmt, fn func(pc *pgx.Conn) error) error {
	pc, err := PgxConn(conn)
	if err != nil {
		return err
	}
	if _, err := pc.Prepare(ctx, s.name, s.sql); err != nil {
		return mapError(err)
	}
	return fn(pc)
}

// Query runs a prepared statement outside any batch and hands its rows to
// scan.
func (l *Ledger) Query(ctx context.Context, s *Stmt, scan func(pgx.Rows) error, args ...any) error {
	return l.withPrepared(ctx, s, queryPrepared(ctx, s, scan, args))
}

// queryOn is Query on a connection the caller holds.
func (l *Ledger) queryOn(ctx context.Context, conn bun.Conn, s *Stmt, scan func(pgx.Rows) error, args ...any) error {
	return withPreparedOn(ctx, conn, s, queryPrepared(ctx, s, scan, args))
}

// queryPrepared runs s with args and hands its rows to scan.
func queryPrepared(ctx context.Context, s *Stmt, scan func(pgx.Rows) error, args []any) func(pc *pgx.Conn) error {
	return func(pc *pgx.Conn) error {
		rows, err := pc.Query(ctx, s.name, args...)
		if err != nil {
			return mapError(err)
		}
		defer rows.Close()
		if err := scan(rows); err != nil {
			return err
		}
		rows.Close()
		return mapError(rows.Err())
	}
}

// Exec runs a prepared statement as its own transaction.
func (l *Ledger) Exec(ctx context.Context, s *Stmt, args ...any) error {
	return l.withPrepared(ctx, s, func(pc *pgx.Conn) error {
		_, err := pc.Exec(ctx, s.name, args...)
		return mapError(err)
	})
}

// SQL is the statement's text.
func (s *Stmt) SQL() string { return s.sql }
