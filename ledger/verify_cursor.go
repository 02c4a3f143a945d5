package ledger

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// journalCursor reads one table of the journal (entries, postings or bill
// lines) in key order, a batch at a time, through a cursor of the verify
// transaction (DECLARE … CURSOR, then FETCH). The stream merges three of
// them by (merchant, seq) in Go instead of asking PostgreSQL to join the
// tables: no join means no join method for the planner to choose from the
// statistics, and no probe per row (issue 17; docs/performance.md, "The
// reads of audit verify"). Each batch is copied out of the connection's
// buffer into one reused arena, so that the three cursors' current rows
// stay readable side by side and the connection stays free between
// fetches for the account lookups (verify_accounts.go). Memory is one
// batch per cursor, whatever the journal's size.
type journalCursor struct {
	name  string   // the cursor's name in the transaction
	types []uint32 // the type of each column, read in binary
	batch int      // rows per fetch

	arena []byte   // the batch's values, back to back
	offs  []int    // per value: start in arena, and length (-1: NULL)
	vals  [][]byte // per value, a slice of arena (nil: NULL)
	n     int      // rows in the batch
	pos   int      // the current row
	done  bool     // the last fetch returned fewer rows than asked: nothing follows
	last  journalKey
	// fetched, when set, is called after each fetch, with the connection
	// free: the postings' accounts are looked up there.
	fetched func(ctx context.Context, conn *pgconn.PgConn) error
}

// journalKey is the (merchant, merchant_seq) a row belongs to.
type journalKey struct{ merchant, seq int64 }

func (k journalKey) less(o journalKey) bool {
	return k.merchant < o.merchant || (k.merchant == o.merchant && k.seq < o.seq)
}

// verifyFetchRows is how many rows one FETCH returns: large enough that
// the round trips are negligible (a few hundred for a million entries),
// small enough that a batch of entries with their metadata stays a few MB.
const verifyFetchRows = 8192

// declare opens the cursor on query, which must return the merchant and
// the merchant_seq as its first two columns, in that order.
func (c *journalCursor) declare(ctx context.Context, conn *pgconn.PgConn, query string) error {
	if c.batch == 0 {
		c.batch = verifyFetchRows
	}
	if c.arena == nil {
		c.arena = make([]byte, 0, 64<<10) // never nil: an empty value must not read as NULL
	}
	_, err := conn.Exec(ctx, "declare "+c.name+" no scroll cursor for "+query).ReadAll()
	return mapError(err)
}

// peek returns the current row, fetching the next batch when the last one
// is read, or nil at the end.
func (c *journalCursor) peek(ctx context.Context, conn *pgconn.PgConn) ([][]byte, error) {
	if c.pos >= c.n {
		if c.done {
			return nil, nil
		}
		if err := c.fetch(ctx, conn); err != nil {
			return nil, err
		}
		if c.n == 0 {
			return nil, nil
		}
	}
	nc := len(c.types)
	return c.vals[c.pos*nc : (c.pos+1)*nc : (c.pos+1)*nc], nil
}

// key is the current row's key; the row must exist (peek).
func (c *journalCursor) key() journalKey {
	nc := len(c.types)
	v := c.vals[c.pos*nc : (c.pos+1)*nc]
	return journalKey{readInt8(v[0]), readInt8(v[1])}
}

// advance moves past the current row.
func (c *journalCursor) advance() { c.pos++ }

func (c *journalCursor) fetch(ctx context.Context, conn *pgconn.PgConn) error {
	rr := conn.ExecParams(ctx, "fetch forward "+strconv.Itoa(c.batch)+" from "+c.name, nil, nil, nil, []int16{pgx.BinaryFormatCode})
	if err := checkColumns(c.name, rr.FieldDescriptions(), c.types); err != nil {
		rr.Close()
		return err
	}
	c.arena, c.offs, c.n, c.pos = c.arena[:0], c.offs[:0], 0, 0
	for rr.NextRow() {
		for _, v := range rr.Values() {
			if v == nil {
				c.offs = append(c.offs, 0, -1)
				continue
			}
			c.offs = append(c.offs, len(c.arena), len(v))
			c.arena = append(c.arena, v...)
		}
		c.n++
	}
	if _, err := rr.Close(); err != nil {
		return mapError(err)
	}
	c.done = c.n < c.batch
	c.vals = c.vals[:0]
	for i := 0; i < len(c.offs); i += 2 {
		start, n := c.offs[i], c.offs[i+1]
		if n < 0 {
			c.vals = append(c.vals, nil)
			continue
		}
		c.vals = append(c.vals, c.arena[start:start+n:start+n])
	}
	// The merge relies on the order: a plan that did not deliver it would
	// make a wrong report, so it is an error instead. Each row has the two
	// key columns (checkColumns) of 8 bytes (NOT NULL int8).
	nc := len(c.types)
	for r := 0; r < c.n; r++ {
		v := c.vals[r*nc : (r+1)*nc]
		if len(v[0]) != 8 || len(v[1]) != 8 {
			return fmt.Errorf("ledger: verify: %s: a key column is not an int8", c.name)
		}
		k := journalKey{readInt8(v[0]), readInt8(v[1])}
		if k.less(c.last) {
			return fmt.Errorf("ledger: verify: %s: rows out of key order (%d/%d after %d/%d)", c.name, k.merchant, k.seq, c.last.merchant, c.last.seq)
		}
		c.last = k
	}
	if c.fetched != nil && c.n > 0 {
		return c.fetched(ctx, conn)
	}
	return nil
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
