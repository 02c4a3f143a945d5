package cellmove

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// The copy runs on one pgx connection per cell: COPY is pgx's (the
// database/sql driver has none), and the statements around it share the
// COPY's transaction, so they are pgx's too, with bound parameters. Table
// and column names come from tables (ours) and from the target's catalog,
// never from input, and are quoted.

// side is one cell's connection inside its transaction of a round.
type side struct {
	conn *pgx.Conn
}

// begin opens the round's transaction with the merchant's id in the
// setting every table's where reads. The source reads one snapshot
// (repeatable read, read only): every table of the round is of the same
// moment. The target's round takes the role gateway_mover once its
// staging tables exist (round).
func begin(ctx context.Context, conn *pgx.Conn, merchant int64, source bool) (*side, error) {
	mode := "begin"
	if source {
		mode = "begin isolation level repeatable read read only"
	}
	// A round of a large merchant streams millions of rows in one
	// statement, and one side waits while the other works: the pool's
	// time-outs, meant for requests, do not apply to it.
	for _, q := range []string{mode, "set local statement_timeout = 0", "set local idle_in_transaction_session_timeout = 0"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return nil, err
		}
	}
	if _, err := conn.Exec(ctx, "select set_config('cellmove.m', $1, true)", fmt.Sprint(merchant)); err != nil {
		return nil, err
	}
	return &side{conn: conn}, nil
}

func (s *side) commit(ctx context.Context) error {
	_, err := s.conn.Exec(ctx, "commit")
	return err
}

func (s *side) rollback() {
	// A fresh context: the round's may be the one that was cancelled.
	_, _ = s.conn.Exec(context.Background(), "rollback")
}

// quoteIdent quotes a name for SQL.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// shape is a table's columns and primary key, as the target has them.
type shape struct {
	cols []string
	pk   []string
}

// shapeOf reads the table's columns (in their order, generated ones left
// out: the target computes them) and primary key on conn, and checks that
// other has the same columns: both cells must be migrated alike.
func shapeOf(ctx context.Context, conn, other *pgx.Conn, name string) (shape, error) {
	cols, err := columns(ctx, conn, name)
	if err != nil {
		return shape{}, err
	}
	theirs, err := columns(ctx, other, name)
	if err != nil {
		return shape{}, err
	}
	if !slices.Equal(cols, theirs) {
		return shape{}, fmt.Errorf("cellmove: table %s has columns %v in one cell and %v in the other: migrate both cells first", name, cols, theirs)
	}
	rows, err := conn.Query(ctx, `select a.attname from pg_constraint c
		join unnest(c.conkey) with ordinality k(attnum, n) on true
		join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum
		where c.conrelid = to_regclass($1) and c.contype = 'p' order by k.n`, name)
	if err != nil {
		return shape{}, err
	}
	pk, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return shape{}, err
	}
	if len(pk) == 0 {
		return shape{}, fmt.Errorf("cellmove: table %s has no primary key", name)
	}
	return shape{cols: cols, pk: pk}, nil
}

func columns(ctx context.Context, conn *pgx.Conn, name string) ([]string, error) {
	rows, err := conn.Query(ctx, `select attname from pg_attribute
		where attrelid = to_regclass($1) and attnum > 0 and not attisdropped and attgenerated = ''
		order by attnum`, name)
	if err != nil {
		return nil, err
	}
	cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err == nil && len(cols) == 0 {
		err = fmt.Errorf("cellmove: table %s does not exist", name)
	}
	return cols, err
}

func (sh shape) list() string {
	q := make([]string, len(sh.cols))
	for i, c := range sh.cols {
		q[i] = quoteIdent(c)
	}
	return strings.Join(q, ", ")
}

// read is the select list of the table's rows at the source: its columns,
// the local ones replaced by their values.
func (sh shape) read(t table) string {
	q := make([]string, len(sh.cols))
	for i, c := range sh.cols {
		q[i] = quoteIdent(c)
		if v, ok := t.local[c]; ok {
			q[i] = v + " as " + q[i]
		}
	}
	return strings.Join(q, ", ")
}

// pipe streams the rows of query on src into table (with cols) on dst in
// COPY's binary format, and returns how many rows arrived.
func pipe(ctx context.Context, src, dst *pgx.Conn, query, into, cols string) (int64, error) {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := src.PgConn().CopyTo(ctx, pw, "copy ("+query+") to stdout (format binary)")
		pw.CloseWithError(err)
		done <- err
	}()
	tag, err := dst.PgConn().CopyFrom(ctx, pr, "copy "+into+" ("+cols+") from stdin (format binary)")
	pr.CloseWithError(errors.New("cellmove: the target stopped reading"))
	srcErr := <-done
	if err != nil {
		return 0, err
	}
	if srcErr != nil {
		return 0, srcErr
	}
	return tag.RowsAffected(), nil
}

// stageName is the temporary table a round stages a table's rows in.
func stageName(name string) string { return quoteIdent("cellmove_stage_" + name) }

// round copies what the target lacks of the merchant's rows from src to
// dst, both inside their round's transaction: the appendOnly tables' rows
// past the target's highest sequence, the insertNew tables' rows the
// target has not, and the replace tables made exactly the source's. It
// returns the rows written. at is the mover's step hook (tests).
func round(ctx context.Context, src, dst *side, cache *[]shape, at func(string)) (int64, error) {
	shapes := *cache
	// The staging tables are the session's own (the operator's user may
	// create temporary tables; the role need not), lent to the role.
	for _, t := range tables {
		if t.mode == appendOnly {
			continue
		}
		if _, err := dst.conn.Exec(ctx, "create temporary table "+stageName(t.name)+" (like "+quoteIdent(t.name)+") on commit drop"); err != nil {
			return 0, err
		}
		if _, err := dst.conn.Exec(ctx, "grant select, insert on "+stageName(t.name)+" to "+moverRole); err != nil {
			return 0, err
		}
	}
	if _, err := dst.conn.Exec(ctx, "set local role "+moverRole); err != nil {
		return 0, err
	}
	// Stage every table that is not appended to, in order, before
	// anything is removed or written.
	if shapes == nil {
		// The tables' shapes, read once per move: a migration does not
		// run in the middle of one (both cells' schemas are compared).
		shapes = make([]shape, len(tables))
		for i, t := range tables {
			sh, err := shapeOf(ctx, dst.conn, src.conn, t.name)
			if err != nil {
				return 0, err
			}
			shapes[i] = sh
		}
		*cache = shapes
	}
	for i, t := range tables {
		sh := shapes[i]
		if t.mode == appendOnly {
			continue
		}
		query := "select " + sh.read(t) + " from " + quoteIdent(t.name) + " where " + t.where
		if _, err := pipe(ctx, src.conn, dst.conn, query, stageName(t.name), sh.list()); err != nil {
			return 0, fmt.Errorf("cellmove: staging %s: %w", t.name, err)
		}
	}
	// Rows the source no longer has go first, children before parents.
	for i := len(tables) - 1; i >= 0; i-- {
		if t := tables[i]; t.mode == replace {
			if _, err := dst.conn.Exec(ctx, deleteMissing(t, shapes[i])); err != nil {
				return 0, fmt.Errorf("cellmove: %s: %w", t.name, err)
			}
		}
	}
	var total int64
	for i, t := range tables {
		at("write:" + t.name) // a mover killed in the middle of a round
		n, err := write(ctx, src, dst, t, shapes[i])
		if err != nil {
			return 0, fmt.Errorf("cellmove: copying %s: %w", t.name, err)
		}
		total += n
	}
	return total, nil
}

// write brings one table's new rows into the target.
func write(ctx context.Context, src, dst *side, t table, sh shape) (int64, error) {
	if t.mode == appendOnly {
		var after int64
		if err := dst.conn.QueryRow(ctx, "select coalesce(max("+quoteIdent(t.seq)+"), 0) from "+quoteIdent(t.name)+" where "+t.where).Scan(&after); err != nil {
			return 0, err
		}
		if _, err := src.conn.Exec(ctx, "select set_config('cellmove.after', $1, true)", fmt.Sprint(after)); err != nil {
			return 0, err
		}
		query := "select " + sh.list() + " from " + quoteIdent(t.name) + " where " + t.where +
			" and " + quoteIdent(t.seq) + " > current_setting('cellmove.after')::bigint order by " + quoteIdent(t.seq)
		return pipe(ctx, src.conn, dst.conn, query, quoteIdent(t.name), sh.list())
	}
	q := "insert into " + quoteIdent(t.name) + " (" + sh.list() + ") overriding system value select " + sh.list() +
		" from " + stageName(t.name) + " on conflict (" + quotedList(sh.pk) + ") do "
	var set []string
	for _, c := range sh.cols {
		if !slices.Contains(sh.pk, c) {
			set = append(set, quoteIdent(c)+" = excluded."+quoteIdent(c))
		}
	}
	if t.mode == insertNew || len(set) == 0 {
		q += "nothing"
	} else {
		// Only rows that differ are written: an unchanged row keeps its
		// version, and the update triggers see only real changes.
		q += "update set " + strings.Join(set, ", ") + " where (" + rowOf(quoteIdent(t.name), sh) + ") is distinct from (" + rowOf("excluded", sh) + ")"
	}
	tag, err := dst.conn.Exec(ctx, q)
	return tag.RowsAffected(), err
}

// deleteMissing removes the target's rows of the merchant that the staged
// source rows do not have (by primary key).
func deleteMissing(t table, sh shape) string {
	var on []string
	for _, c := range sh.pk {
		on = append(on, "s."+quoteIdent(c)+" = d."+quoteIdent(c))
	}
	return "delete from " + quoteIdent(t.name) + " d where " + t.where +
		" and not exists (select 1 from " + stageName(t.name) + " s where " + strings.Join(on, " and ") + ")"
}

func quotedList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quoteIdent(n)
	}
	return strings.Join(q, ", ")
}

func rowOf(alias string, sh shape) string {
	q := make([]string, len(sh.cols))
	for i, c := range sh.cols {
		q[i] = alias + "." + quoteIdent(c)
	}
	return strings.Join(q, ", ")
}
