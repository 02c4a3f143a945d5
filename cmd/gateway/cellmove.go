package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/cellmove"
	"github.com/paygate/gateway/internal/cells"
	"github.com/paygate/gateway/internal/database"
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
		mv, close, err = directoryMover(ctx, e, *shopNo, *from, *to)
	} else {
		mv, close, err = urlMover(ctx, *from, *to, *fromName, *toName)
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
	return printJSON(e, map[string]any{"shopNo": res.ShopNo, "from": mv.From.Name, "to": mv.To.Name, "merchantId": res.Merchant,
		"rowsCopied": res.Rows, "pauseMs": res.Pause.Milliseconds(), "pause": res.Pause.String(), "resumed": res.Resumed,
		"copyMs": res.Copy.Milliseconds(), "tailMs": res.Tail.Milliseconds(), "verifyMs": res.Verify.Milliseconds(), "removeMs": res.Remove.Milliseconds(),
		"headSeq": res.Head.Seq, "headHash": fmt.Sprintf("%x", res.Head.Hash)})
}

// urlMover is a mover between two URLs with a local directory.
func urlMover(ctx context.Context, from, to, fromName, toName string) (*cellmove.Mover, func(), error) {
	if from == "" {
		return nil, nil, usageError("--from is required with a --to URL (or set GATEWAY_CELLS and name the target cell)")
	}
	dbs, close, err := openMoveDBs(ctx, map[string]string{"--from": from, "--to": to})
	if err != nil {
		return nil, nil, err
	}
	return &cellmove.Mover{From: cellmove.Cell{Name: fromName, DB: dbs["--from"]}, To: cellmove.Cell{Name: toName, DB: dbs["--to"]},
		Dir: cellmove.NewLocalDirectory()}, close, nil
}

// directoryMover is a mover between two cells of GATEWAY_CELLS driven by
// the directory: the source is where the directory places the merchant,
// or from when the operator names it (a move resumed after its switch,
// when the directory already places the merchant in the target).
func directoryMover(ctx context.Context, e *env, shopNo, from, to string) (*cellmove.Mover, func(), error) {
	cfg, err := cellsConfig(e)
	if err != nil {
		return nil, nil, err
	}
	urls := map[string]string{}
	for _, c := range cfg.Cells {
		urls[c.Name] = c.URL
	}
	for flag, name := range map[string]string{"--to": to, "--from": from} {
		if name != "" && urls[name] == "" {
			return nil, nil, usageError(fmt.Sprintf("%s: %q is not a cell of GATEWAY_CELLS", flag, name))
		}
	}
	dbs, close, err := openMoveDBs(ctx, urls)
	if err != nil {
		return nil, nil, err
	}
	dir := cells.NewDirectory(dbs[cfg.HomeCell().Name])
	ent, found, err := dir.Lookup(ctx, shopNo)
	if err == nil && !found {
		err = &exitError{code: 1, msg: "merchant not found"}
	}
	if err == nil && from == "" && ent.Cell == to {
		err = fmt.Errorf("the directory places %s in cell %s already: to resume a move switched there, name its source with --from", shopNo, to)
	}
	if from == "" {
		from = ent.Cell
	}
	if err == nil && urls[from] == "" {
		err = fmt.Errorf("the directory places %s in cell %s, which GATEWAY_CELLS does not name", shopNo, ent.Cell)
	}
	if err != nil {
		close()
		return nil, nil, err
	}
	return &cellmove.Mover{From: cellmove.Cell{Name: from, DB: dbs[from]}, To: cellmove.Cell{Name: to, DB: dbs[to]},
		Dir: cells.NewMoveDirectory(dir)}, close, nil
}

// openMoveDBs opens each named URL; the function returned closes them all.
func openMoveDBs(ctx context.Context, urls map[string]string) (map[string]*bun.DB, func(), error) {
	dbs := map[string]*bun.DB{}
	close := func() {
		for _, db := range dbs {
			_ = db.Close()
		}
	}
	for name, url := range urls {
		db, err := database.OpenDB(ctx, url, database.DBOptions{ConnsMax: 4})
		if err != nil {
			close()
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		dbs[name] = db
	}
	return dbs, close, nil
}
