package cellcmd

import (
	"context"
	"fmt"
	"slices"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/cells"
	"github.com/paygate/gateway/internal/database"
)

// ErrNotFound is a shop number the directory does not place.
var ErrNotFound = fmt.Errorf("merchant not found")

// InitResult is one cell made a cell by `gateway cells init`.
type InitResult struct {
	Name   string `json:"name"`
	Number int    `json:"number"`
	Placed int    `json:"placed"`
}

// Init makes every database of GATEWAY_CELLS a cell (docs/scaling.md,
// "Cells"): each is numbered in the directory (the home cell's database),
// given its identity and its range of merchant ids, and any merchant it
// has that the directory lacks is placed. Safe to run again; a database
// that is already another cell is refused.
func (e Env) Init(ctx context.Context) ([]InitResult, error) {
	dir, closeDir, err := e.OpenDirectory(ctx)
	if err != nil {
		return nil, err
	}
	defer closeDir()
	var out []InitResult
	for _, name := range e.Names() {
		r, err := e.initCell(ctx, dir, name)
		if err != nil {
			return out, fmt.Errorf("cell %s: %w", name, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func (e Env) initCell(ctx context.Context, dir *cells.Directory, name string) (InitResult, error) {
	cfg, err := e.cell(name)
	if err != nil {
		return InitResult{}, err
	}
	s, err := app.OpenStore(ctx, cfg, e.LogOut, database.DBOptions{ConnsMax: 2})
	if err != nil {
		return InitResult{}, err
	}
	defer s.Close()
	// A database already a cell keeps its number; else the directory
	// gives the lowest free one.
	have, ok, err := cells.ReadIdentity(ctx, s.DB)
	if err != nil {
		return InitResult{}, err
	}
	if ok && have.Name != name {
		return InitResult{}, fmt.Errorf("its database is already cell %s", have.Name)
	}
	number, err := dir.Register(ctx, name, have.Number)
	if err != nil {
		return InitResult{}, err
	}
	if err := cells.Init(ctx, s.DB, cells.Identity{Name: name, Number: number}); err != nil {
		return InitResult{}, err
	}
	placed, err := dir.PlaceMissing(ctx, name, s.DB)
	return InitResult{Name: name, Number: number, Placed: placed}, err
}

// PlaceNew chooses the cell a new merchant goes to: the one the operator
// names (an error naming --cell when it is no registered cell of
// GATEWAY_CELLS), or the emptiest (fewest merchants in the directory).
func (e Env) PlaceNew(ctx context.Context, chosen string) (cell string, badFlag bool, err error) {
	dir, closeDir, err := e.OpenDirectory(ctx)
	if err != nil {
		return "", false, err
	}
	defer closeDir()
	registered, err := dir.Cells(ctx)
	if err != nil {
		return "", false, err
	}
	if chosen != "" {
		if _, ok := registered[chosen]; !ok || !slices.Contains(e.Names(), chosen) {
			return "", true, fmt.Errorf("--cell: %q is not a cell of GATEWAY_CELLS made by `gateway cells init`", chosen)
		}
		return chosen, false, nil
	}
	cell, err = dir.Emptiest(ctx, e.Names())
	return cell, false, err
}

// PlaceCreated records a merchant just created in its cell. Should it
// fail, the merchant exists in the cell and not in the directory: `gateway
// cells init` places it.
func (e Env) PlaceCreated(ctx context.Context, cell, shopNo string, id int64) error {
	dir, closeDir, err := e.OpenDirectory(ctx)
	if err == nil {
		defer closeDir()
		err = dir.Place(ctx, cells.Entry{ShopNo: shopNo, MerchantID: id, Cell: cell})
	}
	if err != nil {
		return fmt.Errorf("merchant %s was created in cell %s but not placed in the directory (run `gateway cells init` to place it): %w",
			shopNo, cell, err)
	}
	return nil
}

// CellOfShop is the cell the directory places shopNo in; ErrNotFound when
// it places it nowhere.
func (e Env) CellOfShop(ctx context.Context, shopNo string) (string, error) {
	dir, closeDir, err := e.OpenDirectory(ctx)
	if err != nil {
		return "", err
	}
	defer closeDir()
	ent, found, err := dir.Lookup(ctx, shopNo)
	if err == nil && !found {
		err = ErrNotFound
	}
	return ent.Cell, err
}

// OpenDirectory opens the directory: the home cell's database.
func (e Env) OpenDirectory(ctx context.Context) (*cells.Directory, func(), error) {
	home, err := app.OpenStore(ctx, e.Cfg.ForCell(e.Cfg.HomeCell()), e.LogOut, database.DBOptions{ConnsMax: 2})
	if err != nil {
		return nil, nil, fmt.Errorf("cell %s (the directory's): %w", e.Cfg.HomeCell().Name, err)
	}
	return cells.NewDirectory(home.DB), home.Close, nil
}
