package main

import (
	"context"
	"strings"

	"github.com/paygate/gateway/cmd/gateway/internal/cellcmd"
	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/cellmove"
	"github.com/paygate/gateway/internal/config"
)

// cmdCellsMove moves one merchant from one cell's database to another's
// (docs/scaling.md, "Moving a merchant between cells"), or resumes its
// open move, or with --rollback undoes one that has not verified yet.
// With GATEWAY_CELLS and --to naming a cell, the directory drives it: the
// source is the merchant's cell there, the merchant is marked moving (its
// requests answer 503 while the routers' caches catch up and during the
// pause) and switched at the end. With --from and --to URLs it runs with
// a local directory: the operator keeps the merchant's traffic away during
// the pause (the printed figure).
func cmdCellsMove(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "cells move", "Move a merchant between cells: copy, pause, verify, switch, remove at the source.\n"+
		"With GATEWAY_CELLS: --to names the target cell, the directory gives the source and is switched.\n"+
		"Without: --from and --to are the databases' URLs.\n"+
		"Both cells' URLs connect as a member of gateway_mover (a superuser is one). Run again to resume a move that stopped.")
	from := fs.String("from", "", "the source cell's database URL; with GATEWAY_CELLS, optionally its name (to resume a move already switched)")
	to := fs.String("to", "", "the target: a cell of GATEWAY_CELLS, or its database URL (required)")
	fromName := fs.String("from-name", "source", "with URLs: the source cell's name in the tombstone")
	toName := fs.String("to-name", "target", "with URLs: the target cell's name in the tombstone")
	shopNo := fs.String("shop-no", "", "the merchant's shop number (required)")
	rollback := fs.Bool("rollback", false, "undo the merchant's open move instead (only before its copy verified)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if *to == "" || *shopNo == "" {
		return usageError("--to and --shop-no are required")
	}
	var (
		mv    *cellmove.Mover
		close func()
		err   error
	)
	if !strings.Contains(*to, "://") {
		var cfg *config.Config
		if cfg, err = cellsConfig(e); err != nil {
			return err
		}
		mv, close, err = app.DirectoryMover(ctx, cfg, *shopNo, *from, *to)
	} else if *from == "" {
		return usageError("--from is required with a --to URL (or set GATEWAY_CELLS and name the target cell)")
	} else {
		mv, close, err = cellcmd.URLMover(ctx, *from, *to, *fromName, *toName)
	}
	if err != nil {
		return err
	}
	defer close()
	mv.Log = e.log
	if *rollback {
		if err := mv.Rollback(ctx, *shopNo); err != nil {
			return err
		}
		return printJSON(e, map[string]any{"shopNo": *shopNo, "rolledBack": true})
	}
	res, err := mv.Move(ctx, *shopNo)
	if err != nil {
		return err
	}
	return printJSON(e, cellcmd.MoveView(res, mv.From.Name, mv.To.Name))
}
