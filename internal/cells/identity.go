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
			return nil
		}
		if err := merchant.StartIDsInCell(ctx, tx, id.Number); err != nil {
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
