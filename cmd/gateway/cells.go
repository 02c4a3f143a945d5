package main

import (
	"context"
	"errors"
	"time"

	"github.com/paygate/gateway/cmd/gateway/internal/cellcmd"
	"github.com/paygate/gateway/internal/config"
)

// The cells' commands and hooks (docs/scaling.md, "Cells"); the work is
// cellcmd's.

// cellEnv is cellcmd's view of the environment with cfg (GATEWAY_CELLS
// whole). DATABASE_READ_WAIT_MS was checked by e.config already.
func cellEnv(e *env, cfg *config.Config) cellcmd.Env {
	wait, _ := parseReadWait(e.getenv("DATABASE_READ_WAIT_MS"), readWaitOperatorMs*time.Millisecond)
	return cellcmd.Env{Cfg: cfg, LogOut: e.stderr, Log: e.log, ReadWait: wait}
}

// cmdCellsInit makes every database of GATEWAY_CELLS a cell (cellcmd.Init).
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
	out, err := cellEnv(e, cfg).Init(ctx)
	if err != nil {
		return err
	}
	return printJSON(e, out)
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
	cell, badFlag, err := cellEnv(e, cfg).PlaceNew(ctx, chosen)
	if badFlag {
		return "", usageError(err.Error())
	}
	return cell, err
}

// cellOfShop is the cell the directory places shopNo in.
func cellOfShop(ctx context.Context, e *env, cfg *config.Config, shopNo string) (string, error) {
	cell, err := cellEnv(e, cfg).CellOfShop(ctx, shopNo)
	if errors.Is(err, cellcmd.ErrNotFound) {
		return "", &exitError{code: 1, msg: "merchant not found"}
	}
	return cell, err
}

// cmdCellsDeclines prints each cell's log of a move's 91 declines (docs/network.md).
func cmdCellsDeclines(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "cells declines", "Print the authorizations declined 91 during merchants' moves between cells (each cell's log, by cell).")
	shopNo := fs.String("shop-no", "", "only this merchant's (default: every merchant's)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	cfg, err := cellsConfig(e)
	if err != nil {
		return err
	}
	out, err := cellEnv(e, cfg).Declines(ctx, *shopNo)
	if err != nil {
		return err
	}
	return printJSON(e, map[string]any{"cells": out})
}
