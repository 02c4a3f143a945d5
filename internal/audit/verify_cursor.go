package audit

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// journalCursor reads one table of the journal (entries, postings or bill
// lines) in key order, a batch at a time, through a cursor of the verify
// transaction (DECLARE … CURSOR, then FETCH). The stream merges three of
// them by (merchant, seq) in Go instead of asking PostgreSQL to join the
// tables: no join means no join method for the planner to choose from the
// statistics, and no probe per row (issue 17; docs/performance.md, "The
// reads of audit verify"). Each batch is copied out of the connection's
// buffer, so that the three cursors' current rows stay readable side by
// side while the connection fetches the next batches.
//
// The fetches run on a goroutine of their own (cursorFetcher), one batch
// ahead of the stream: while the stream hashes and checks one batch,
// PostgreSQL reads the next. Memory is two batches per cursor, whatever
// the journal's size.
type journalCursor struct {
	name  string   // the cursor's name in the transaction
	types []uint32 // the type of each column, read in binary
	rows  int      // rows per fetch

	f         *cursorFetcher
	cur, next *cursorBatch // cur is read; next is being fetched, or ready
	pos       int          // cur's current row

	last journalKey // the fetcher's: the last key fetched
	// fetched, when set, is called by the fetcher after each fetch, with
	// the connection free: the postings' accounts are looked up there.
	fetched func(ctx context.Context, conn *pgconn.PgConn, b *cursorBatch) error
}

// cursorBatch is one fetch's rows. The fetcher fills it and closes ready;
// the stream reads it only after that, and hands it back for the next fill
// only once it has read it.
type cursorBatch struct {
	arena []byte             // the values, back to back
	offs  []int              // per value: start in arena, and length (-1: NULL)
	vals  [][]byte           // per value, a slice of arena (nil: NULL)
	n     int                // rows
	done  bool               // fewer rows than asked: nothing follows
	accts []postings.Account // a posting's source and destination, per row
	ids   []int64            // int8Pairs's
	err   error
	ready chan struct{}
}

// journalKey is the (merchant, merchant_seq) a row belongs to.
type journalKey struct{ merchant, seq int64 }

func (k journalKey) less(o journalKey) bool {
	return k.merchant < o.merchant || (k.merchant == o.merchant && k.seq < o.seq)
}

// verifyFetchRows is how many rows one FETCH returns. PostgreSQL holds a
// FETCH's rows in a tuplestore before sending them: a batch that outgrows
// the memory it reuses costs fresh pages every time. On the bench's million
// entries, PostgreSQL's CPU for the three cursors was 1.8-2.3 s in batches
// of 1,024 rows, 2.7-2.9 s of 2,048 and 3.1-3.5 s of 8,192; below 1,024
// the round trips (three thousand here) start to count.
const verifyFetchRows = 1024

// cursorFetcher owns the connection while the stream runs: it fills the
// batches the stream asks for, in the order asked. The stream waits only
// for a batch it asked for earlier, and a fill never waits for the
// stream, so neither can wait for the other forever.
type cursorFetcher struct {
	conn *pgconn.PgConn
	reqs chan fetchRequest
	wg   sync.WaitGroup
	err  error // the first fill's error: nothing is sent after it
}

type fetchRequest struct {
	c *journalCursor
	b *cursorBatch
}

// startFetcher starts the fetches of cursors (declared on conn). Until
// stop returns, only the fetcher uses conn.
func startFetcher(ctx context.Context, conn *pgconn.PgConn, cursors ...*journalCursor) *cursorFetcher {
	f := &cursorFetcher{conn: conn, reqs: make(chan fetchRequest, 2*len(cursors))}
	for _, c := range cursors {
		c.f = f
		if c.rows == 0 {
			c.rows = verifyFetchRows
		}
		c.cur, c.next = &cursorBatch{}, &cursorBatch{}
		f.ask(c, c.next)
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for r := range f.reqs {
			if f.err == nil {
				f.err = r.c.fill(ctx, conn, r.b)
			}
			r.b.err = f.err
			close(r.b.ready)
		}
	}()
	return f
}

func (f *cursorFetcher) ask(c *journalCursor, b *cursorBatch) {
	b.ready = make(chan struct{})
	f.reqs <- fetchRequest{c, b} // never blocks: at most one request per cursor is pending
}

// stop waits for the fetches asked for, and returns the connection.
func (f *cursorFetcher) stop() {
	close(f.reqs)
	f.wg.Wait()
}

// declareCursor opens a cursor named name on query, which must return the
// merchant and the merchant_seq as its first two columns.
func declareCursor(ctx context.Context, conn *pgconn.PgConn, name, query string) error {
	_, err := conn.Exec(ctx, "declare "+name+" no scroll cursor for "+query).ReadAll()
	return ledger.MapError(err)
}

// peek returns the current row, waiting for the next batch when the last
// one is read, or nil at the end.
func (c *journalCursor) peek() ([][]byte, error) {
	for c.pos >= c.cur.n {
		if c.cur.done {
			return nil, nil
		}
		<-c.next.ready
		if c.next.err != nil {
			return nil, c.next.err
		}
		c.cur, c.next, c.pos = c.next, c.cur, 0
		if !c.cur.done {
			c.f.ask(c, c.next)
		}
	}
	nc := len(c.types)
	return c.cur.vals[c.pos*nc : (c.pos+1)*nc : (c.pos+1)*nc], nil
}

// key is the current row's key; the row must exist (peek).
func (c *journalCursor) key() journalKey {
	nc := len(c.types)
	v := c.cur.vals[c.pos*nc : (c.pos+1)*nc]
	return journalKey{readInt8(v[0]), readInt8(v[1])}
}

// accounts are the current row's accounts, when the fetcher looked them up.
func (c *journalCursor) accounts() (source, destination postings.Account) {
	return c.cur.accts[2*c.pos], c.cur.accts[2*c.pos+1]
}

// advance moves past the current row.
func (c *journalCursor) advance() { c.pos++ }

// fill fetches the cursor's next batch into b (on the fetcher).
func (c *journalCursor) fill(ctx context.Context, conn *pgconn.PgConn, b *cursorBatch) error {
	rr := conn.ExecParams(ctx, "fetch forward "+strconv.Itoa(c.rows)+" from "+c.name, nil, nil, nil, []int16{pgx.BinaryFormatCode})
	if err := checkColumns(c.name, rr.FieldDescriptions(), c.types); err != nil {
		rr.Close()
		return err
	}
	b.arena, b.offs, b.n = b.arena[:0], b.offs[:0], 0
	for rr.NextRow() {
		for _, v := range rr.Values() {
			if v == nil {
				b.offs = append(b.offs, 0, -1)
				continue
			}
			b.offs = append(b.offs, len(b.arena), len(v))
			b.arena = append(b.arena, v...)
		}
		b.n++
	}
	if _, err := rr.Close(); err != nil {
		return ledger.MapError(err)
	}
	b.done = b.n < c.rows
	b.vals = b.vals[:0]
	for i := 0; i < len(b.offs); i += 2 {
		start, n := b.offs[i], b.offs[i+1]
		if n < 0 {
			b.vals = append(b.vals, nil)
			continue
		}
		b.vals = append(b.vals, b.arena[start:start+n:start+n])
	}
	// The merge relies on the order: a plan that did not deliver it would
	// make a wrong report, so it is an error instead.
	nc := len(c.types)
	for r := 0; r < b.n; r++ {
		v := b.vals[r*nc : (r+1)*nc]
		if len(v[0]) != 8 || len(v[1]) != 8 {
			return fmt.Errorf("ledger: verify: %s: a key column is not an int8", c.name)
		}
		k := journalKey{readInt8(v[0]), readInt8(v[1])}
		if k.less(c.last) {
			return fmt.Errorf("ledger: verify: %s: rows out of key order (%d/%d after %d/%d)", c.name, k.merchant, k.seq, c.last.merchant, c.last.seq)
		}
		c.last = k
	}
	if c.fetched != nil && b.n > 0 {
		return c.fetched(ctx, conn, b)
	}
	return nil
}

// int8Pairs returns the values of the int8 columns a and b of each row, in
// a slice the batch reuses.
func (b *cursorBatch) int8Pairs(nc, a, c int) ([]int64, error) {
	b.ids = b.ids[:0]
	for r := 0; r < b.n; r++ {
		v := b.vals[r*nc : (r+1)*nc]
		x, err := int8Col(v, a)
		if err != nil {
			return nil, err
		}
		y, err := int8Col(v, c)
		if err != nil {
			return nil, err
		}
		b.ids = append(b.ids, x, y)
	}
	return b.ids, nil
}

// checkColumns checks that a result has exactly the expected columns, in
// binary: the decoder reads the binary format of exactly these types, so a
// schema that changed under it is an error, not a wrong reading.
func checkColumns(what string, fds []pgconn.FieldDescription, types []uint32) error {
	if fds == nil {
		return nil // the query failed: Close reports why
	}
	if len(fds) != len(types) {
		return fmt.Errorf("ledger: verify: %s returned %d columns, want %d", what, len(fds), len(types))
	}
	for i, fd := range fds {
		if fd.DataTypeOID != types[i] || fd.Format != pgx.BinaryFormatCode {
			return fmt.Errorf("ledger: verify: %s: column %s has type %d (format %d), want type %d in binary",
				what, fd.Name, fd.DataTypeOID, fd.Format, types[i])
		}
	}
	return nil
}
