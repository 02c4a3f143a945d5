package cells

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/merchant"
)

// Identity is what a cell's database says it is.
type Identity struct {
	Name   string `bun:"name"`
	Number int    `bun:"number"`
}

// ReadIdentity is db's identity, and false when db is no cell (never
// initialised: an installation without cells).
func ReadIdentity(ctx context.Context, db bun.IDB) (Identity, bool, error) {
	var id Identity
	err := db.NewRaw("select name, number from cell_identity").Scan(ctx, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return Identity{}, false, nil
	}
	return id, err == nil, err
}

// Init makes db cell id, in one transaction: its identity row, and its
// merchants' id sequence at the start of the number's range. Running it
// again with the same identity changes nothing; with another, it fails:
// a cell's name and number are in the ids it has minted.
func Init(ctx context.Context, db *bun.DB, id Identity) error {
	if err := CheckName(id.Name); err != nil {
		return err
	}
	if id.Number < 1 || id.Number > NumberMax {
		return fmt.Errorf("cell %s: number %d is not 1 to %d", id.Name, id.Number, NumberMax)
	}
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// The one row is locked: two inits at once serialise here.
		if _, err := tx.NewRaw("lock table cell_identity in exclusive mode").Exec(ctx); err != nil {
			return err
		}
		have, ok, err := ReadIdentity(ctx, tx)
		if err != nil {
			return err
		}
		if ok {
			if have != id {
				return fmt.Errorf("this database is already cell %s (number %d), not %s (number %d)", have.Name, have.Number, id.Name, id.Number)
			}
			// Again: a cell made before its row ids had ranges gets them.
			return startRowIDs(ctx, tx, id.Number)
		}
		if err := merchant.StartIDsInCell(ctx, tx, id.Number); err != nil {
			return fmt.Errorf("cell %s: %w", id.Name, err)
		}
		if err := startRowIDs(ctx, tx, id.Number); err != nil {
			return fmt.Errorf("cell %s: %w", id.Name, err)
		}
		_, err = tx.NewRaw("insert into cell_identity (name, number) values (?, ?)", id.Name, id.Number).Exec(ctx)
		return err
	})
}

// Check is a cell's check at start: db was initialised as cell name, and
// its merchant ids are in its number's range. It returns the identity.
func Check(ctx context.Context, db bun.IDB, name string) (Identity, error) {
	id, ok, err := ReadIdentity(ctx, db)
	if err != nil {
		return id, fmt.Errorf("cell %s: %w", name, err)
	}
	if !ok {
		return id, fmt.Errorf("cell %s: its database is not a cell yet: run `gateway cells init`", name)
	}
	if id.Name != name {
		return id, fmt.Errorf("cell %s: its database is cell %s: GATEWAY_CELLS names the wrong URL", name, id.Name)
	}
	if err := merchant.CheckIDsInCell(ctx, db, id.Number); err != nil {
		return id, fmt.Errorf("cell %s: %w", name, err)
	}
	return id, nil
}

// startRowIDs starts every identity column of the schema (entries,
// postings, bill lines, events, …; merchants' is merchant.StartIDsInCell's)
// at the cell's range, number × merchant.CellIDSpan, unless it is there
// already. A move copies a merchant's rows with their ids unchanged
// (internal/cellmove), so the rows one cell mints must never meet
// another's: without this, every cell's entries start at 1 and the first
// move into a cell that has entries fails on entries' key. It reads only
// the catalog and sets sequences (no ALTER TABLE), in Init's transaction.
func startRowIDs(ctx context.Context, db bun.IDB, number int) error {
	from := int64(number) * merchant.CellIDSpan
	_, err := db.NewRaw(`select setval(s.seq, ?, false) from (
			select pg_get_serial_sequence(format('%I.%I', n.nspname, c.relname), a.attname) as seq
			from pg_attribute a
			join pg_class c on c.oid = a.attrelid
			join pg_namespace n on n.oid = c.relnamespace
			where n.nspname = current_schema() and c.relkind = 'r' and a.attidentity <> '' and c.relname <> 'merchants'
		) s where coalesce(pg_sequence_last_value(s.seq::regclass), 0) < ?`, from, from).Exec(ctx)
	if err != nil {
		return fmt.Errorf("starting the row ids in cell %d's range: %w", number, err)
	}
	return nil
}

// IDRange is the merchant ids cell number mints, [from, to).
func IDRange(number int) (from, to int64) {
	return int64(number) * merchant.CellIDSpan, int64(number+1) * merchant.CellIDSpan
}
