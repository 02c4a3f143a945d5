package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/cells"
	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/database"
)

// cmdCellsInit makes every database of GATEWAY_CELLS a cell (docs/scaling.md,
// "Cells"): each is numbered in the directory (the home cell's database),
// given its identity and its range of merchant ids, and any merchant it has
// that the directory lacks is placed. Safe to run again; a database that
// is already another cell is refused.
func cmdCellsInit(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "cells init", "Make every database of GATEWAY_CELLS a cell: its number in the directory (the first cell's database),\n"+
		"its identity and its range of merchant ids; place in the directory any merchant it lacks. Safe to run again.")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	cfg, err := cellsConfig(e)
	if err != nil {
		return err
	}
	dir, closeDir, err := openDirectory(ctx, e, cfg)
	if err != nil {
		return err
	}
	defer closeDir()
	type result struct {
		Name   string `json:"name"`
		Number int    `json:"number"`
		Placed int    `json:"placed"`
	}
	var out []result
	for _, c := range cfg.Cells {
		r, err := initCell(ctx, e, cfg.ForCell(c), dir, c.Name)
		if err != nil {
			return fmt.Errorf("cell %s: %w", c.Name, err)
		}
		out = append(out, result{Name: c.Name, Number: r.Number, Placed: r.placed})
	}
	return printJSON(e, out)
}

type initResult struct {
	Number int
	placed int
}

func initCell(ctx context.Context, e *env, cfg *config.Config, dir *cells.Directory, name string) (initResult, error) {
	s, err := app.OpenStore(ctx, cfg, e.stderr, database.DBOptions{ConnsMax: 2})
	if err != nil {
		return initResult{}, err
	}
	defer s.Close()
	// A database already a cell keeps its number; else the directory
	// gives the lowest free one.
	have, ok, err := cells.ReadIdentity(ctx, s.DB)
	if err != nil {
		return initResult{}, err
	}
	if ok && have.Name != name {
		return initResult{}, fmt.Errorf("its database is already cell %s", have.Name)
	}
	number, err := dir.Register(ctx, name, have.Number)
	if err != nil {
		return initResult{}, err
	}
	if err := cells.Init(ctx, s.DB, cells.Identity{Name: name, Number: number}); err != nil {
		return initResult{}, err
	}
	placed, err := dir.PlaceMissing(ctx, name, s.DB)
	return initResult{Number: number, placed: placed}, err
}

// cellsConfig is the environment's configuration, which must name cells.
func cellsConfig(e *env) (*config.Config, error) {
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	if len(cfg.Cells) == 0 {
		return nil, usageError("GATEWAY_CELLS is not set: without cells there is nothing to do (docs/scaling.md)")
	}
	return cfg, nil
}

// placeNewMerchant chooses the cell a new merchant goes to: the one the
// operator names, or the emptiest (fewest merchants in the directory).
func placeNewMerchant(ctx context.Context, e *env, cfg *config.Config, chosen string) (string, error) {
	var names []string
	for _, c := range cfg.Cells {
		names = append(names, c.Name)
	}
	dir, closeDir, err := openDirectory(ctx, e, cfg)
	if err != nil {
		return "", err
	}
	defer closeDir()
	registered, err := dir.Cells(ctx)
	if err != nil {
		return "", err
	}
	if chosen != "" {
		if _, ok := registered[chosen]; !ok || !slices.Contains(names, chosen) {
			return "", usageError(fmt.Sprintf("--cell: %q is not a cell of GATEWAY_CELLS made by `gateway cells init`", chosen))
		}
		return chosen, nil
	}
	return dir.Emptiest(ctx, names)
}

// placeCreated records a merchant just created in its cell. Should it fail,
// the merchant exists in the cell and not in the directory: `gateway cells
// init` places it.
func placeCreated(ctx context.Context, e *env, cfg *config.Config, cell, shopNo string, id int64) error {
	dir, closeDir, err := openDirectory(ctx, e, cfg)
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

// cellOfShop is the cell the directory places shopNo in.
func cellOfShop(ctx context.Context, e *env, cfg *config.Config, shopNo string) (string, error) {
	dir, closeDir, err := openDirectory(ctx, e, cfg)
	if err != nil {
		return "", err
	}
	defer closeDir()
	ent, found, err := dir.Lookup(ctx, shopNo)
	if err != nil {
		return "", err
	}
	if !found {
		return "", &exitError{code: 1, msg: "merchant not found"}
	}
	return ent.Cell, nil
}

// openDirectory opens the directory: the home cell's database.
func openDirectory(ctx context.Context, e *env, cfg *config.Config) (*cells.Directory, func(), error) {
	home, err := app.OpenStore(ctx, cfg.ForCell(cfg.HomeCell()), e.stderr, database.DBOptions{ConnsMax: 2})
	if err != nil {
		return nil, nil, fmt.Errorf("cell %s (the directory's): %w", cfg.HomeCell().Name, err)
	}
	return cells.NewDirectory(home.DB), home.Close, nil
}
