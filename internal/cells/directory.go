package cells

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/merchant"
)

// The states of a merchant in the directory.
const (
	StateActive = "active"
	StateMoving = "moving" // internal/cellmove's, between a move's start and its switch
)

// Directory is the map of merchants to cells: tables in the home cell's
// database (sql/, "cells"). Every method is one statement or one
// transaction of its own.
type Directory struct{ db *bun.DB }

// NewDirectory is the directory in db, the home cell's database.
func NewDirectory(db *bun.DB) *Directory { return &Directory{db: db} }

// Entry is one merchant's place.
type Entry struct {
	ShopNo     string `bun:"shop_no"`
	MerchantID int64  `bun:"merchant_id"`
	Cell       string `bun:"cell"`
	State      string `bun:"state"`
}

// Register places a cell in the registry, with the number it asks for or,
// with number 0, the lowest free one; a cell already registered keeps its
// number (asking for another is an error). It returns the number.
func (d *Directory) Register(ctx context.Context, name string, number int) (int, error) {
	if err := CheckName(name); err != nil {
		return 0, err
	}
	var got int
	err := d.db.NewRaw(`insert into cell_registry (name, number)
		values (?, coalesce(nullif(?, 0), (select min(n) from generate_series(1, ?) n where n not in (select number from cell_registry))))
		on conflict (name) do update set name = excluded.name
		returning number`, name, number, NumberMax).Scan(ctx, &got)
	if err != nil {
		return 0, fmt.Errorf("registering cell %s: %w", name, err)
	}
	if number != 0 && got != number {
		return got, fmt.Errorf("cell %s is registered as number %d, not %d", name, got, number)
	}
	return got, nil
}

// Cells are the registered cells, by name.
func (d *Directory) Cells(ctx context.Context) (map[string]int, error) {
	var rows []Identity
	if err := d.db.NewRaw("select name, number from cell_registry order by number").Scan(ctx, &rows); err != nil {
		return nil, err
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.Name] = r.Number
	}
	return out, nil
}

// Place records a new merchant in its cell, active. A shop number or a
// merchant id already placed is an error: both are unique across cells.
func (d *Directory) Place(ctx context.Context, e Entry) error {
	_, err := d.db.NewRaw(`insert into cell_directory (shop_no, merchant_id, cell, state) values (?, ?, ?, ?)`,
		e.ShopNo, e.MerchantID, e.Cell, StateActive).Exec(ctx)
	if err != nil {
		return fmt.Errorf("placing %s in cell %s: %w", e.ShopNo, e.Cell, err)
	}
	return nil
}

// Lookup is the place of a shop number, and false when the directory
// does not know it.
func (d *Directory) Lookup(ctx context.Context, shopNo string) (Entry, bool, error) {
	var e Entry
	err := d.db.NewRaw("select shop_no, merchant_id, cell, state from cell_directory where shop_no = ?", shopNo).Scan(ctx, &e)
	if errors.Is(err, sql.ErrNoRows) {
		return Entry{}, false, nil
	}
	return e, err == nil, err
}

// Emptiest is the registered cell among names with the fewest merchants
// (the lowest number on a tie): where a new merchant goes when the
// operator names no cell.
func (d *Directory) Emptiest(ctx context.Context, names []string) (string, error) {
	var name string
	err := d.db.NewRaw(`select r.name from cell_registry r
		left join cell_directory d on d.cell = r.name
		where r.name in (?)
		group by r.name, r.number order by count(d.shop_no), r.number limit 1`, bun.In(names)).Scan(ctx, &name)
	if errors.Is(err, sql.ErrNoRows) {
		return "", errors.New("no cell of GATEWAY_CELLS is registered: run `gateway cells init`")
	}
	return name, err
}

// PlaceMissing places every merchant of cell name's database db that the
// directory lacks, and returns how many it placed. A merchant placed in
// another cell is an error: its shop number or id is in two cells.
func (d *Directory) PlaceMissing(ctx context.Context, name string, db bun.IDB) (int, error) {
	ms, err := merchant.AllPlaced(ctx, db)
	if err != nil {
		return 0, err
	}
	placed := 0
	for _, m := range ms {
		e, found, err := d.Lookup(ctx, m.ShopNo)
		switch {
		case err != nil:
			return placed, err
		case found && (e.Cell != name || e.MerchantID != m.ID):
			return placed, fmt.Errorf("%s (merchant %d) of cell %s is placed in cell %s as merchant %d", m.ShopNo, m.ID, name, e.Cell, e.MerchantID)
		case found:
			continue
		}
		if err := d.Place(ctx, Entry{ShopNo: m.ShopNo, MerchantID: m.ID, Cell: name}); err != nil {
			return placed, err
		}
		placed++
	}
	return placed, nil
}

// All is every merchant's place, by shop number: what verify over cells
// (internal/cells/cellaudit) compares with the cells' own merchants.
func (d *Directory) All(ctx context.Context) ([]Entry, error) {
	var out []Entry
	err := d.db.NewRaw("select shop_no, merchant_id, cell, state from cell_directory order by shop_no").Scan(ctx, &out)
	return out, err
}
