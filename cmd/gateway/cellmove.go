package main

import (
	"context"
	"fmt"

	"github.com/paygate/gateway/internal/cellmove"
	"github.com/paygate/gateway/internal/database"
)

// cmdCellsMove moves one merchant from one cell's database to another's
// (docs/scaling.md, "Moving a merchant between cells"), or resumes its
// open move, or with --rollback undoes one that has not verified yet. With
// no directory configured it runs with a local one: the operator keeps the
// merchant's traffic away during the pause (the printed figure).
func cmdCellsMove(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "cells move", "Move a merchant between cells: copy, pause, verify, switch, remove at the source.\n"+
		"Both URLs connect as a member of gateway_mover (a superuser is one). Run again to resume a move that stopped.")
	from := fs.String("from", "", "the source cell's database URL (required)")
	to := fs.String("to", "", "the target cell's database URL (required)")
	fromName := fs.String("from-name", "source", "the source cell's name in the directory and the tombstone")
	toName := fs.String("to-name", "target", "the target cell's name in the directory and the tombstone")
	shopNo := fs.String("shop-no", "", "the merchant's shop number (required)")
	rollback := fs.Bool("rollback", false, "undo the merchant's open move instead (only before its copy verified)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if *from == "" || *to == "" || *shopNo == "" {
		return usageError("--from, --to and --shop-no are required")
	}
	src, err := database.OpenDB(ctx, *from, database.DBOptions{ConnsMax: 4})
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	defer src.Close()
	dst, err := database.OpenDB(ctx, *to, database.DBOptions{ConnsMax: 4})
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	defer dst.Close()
	dir := cellmove.NewLocalDirectory()
	mv := &cellmove.Mover{From: cellmove.Cell{Name: *fromName, DB: src}, To: cellmove.Cell{Name: *toName, DB: dst}, Dir: dir, Log: e.log}
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
	return printJSON(e, map[string]any{"shopNo": res.ShopNo, "from": *fromName, "to": *toName, "merchantId": res.Merchant,
		"rowsCopied": res.Rows, "pauseMs": res.Pause.Milliseconds(), "pause": res.Pause.String(), "resumed": res.Resumed,
		"copyMs": res.Copy.Milliseconds(), "tailMs": res.Tail.Milliseconds(), "verifyMs": res.Verify.Milliseconds(), "removeMs": res.Remove.Milliseconds(),
		"headSeq": res.Head.Seq, "headHash": fmt.Sprintf("%x", res.Head.Hash)})
}
