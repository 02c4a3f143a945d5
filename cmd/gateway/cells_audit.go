package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"flag"
	"os"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/cells/cellaudit"
)

// The operator's commands over every cell (docs/scaling.md): the
// operator's data written to each, audit verify and checkpoints over all
// (cellcmd, internal/cells/cellaudit).

// withEveryCell is withLedger for the operator's data (BINs, rates, the
// sanctions list): with GATEWAY_CELLS, fn runs in every cell.
func withEveryCell(ctx context.Context, e *env, fs *flag.FlagSet, args []string, fn func(l *app.Services) (any, error)) error {
	cfg, err := e.config()
	if err != nil || len(cfg.Cells) == 0 {
		return withLedger(ctx, e, fs, args, func(l *app.Services) error {
			v, err := fn(l)
			if err != nil {
				return err
			}
			return printJSON(e, v)
		})
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	out, err := cellEnv(e, cfg).Each(ctx, fn)
	if len(out) > 0 {
		_ = printJSON(e, map[string]any{"cells": out})
	}
	return cliError(err)
}

// auditVerifyOverCells is audit verify when --cells or GATEWAY_CELLS
// names cells, and reports whether it ran; with --shop-no it only chooses
// the merchant's cell, verified as one database is.
func auditVerifyOverCells(ctx context.Context, e *env, list, shopNo string, asJSON bool, cpFile, pubFile string) (bool, error) {
	if list != "" {
		getenv := e.getenv
		e.getenv = func(k string) string {
			if k == "GATEWAY_CELLS" {
				return list
			}
			return getenv(k)
		}
	}
	cfg, err := e.config()
	if err != nil || len(cfg.Cells) == 0 {
		return err != nil, err
	}
	if shopNo != "" {
		e.cell, err = cellOfShop(ctx, e, cfg, shopNo)
		return err != nil, err
	}
	cp, pub, err := cellsCheckpointFile(e, cpFile, pubFile)
	if err != nil {
		return true, err
	}
	ok, err := cellEnv(e, cfg).Verify(ctx, cp, pub, e.stdout, asJSON)
	if err == nil && !ok {
		err = &exitError{code: 1, msg: "the cells do not verify"}
	}
	return true, err
}

// cellsCheckpointFile reads --checkpoint over cells, and the public key
// as verifyCheckpoint does.
func cellsCheckpointFile(e *env, file, publicKey string) (*cellaudit.CellsCheckpoint, ed25519.PublicKey, error) {
	if file == "" {
		_, pub, err := verifyCheckpoint(e, "", publicKey)
		return nil, pub, err
	}
	b, err := os.ReadFile(file)
	var cp *cellaudit.CellsCheckpoint
	if err == nil {
		cp, err = cellaudit.ParseCellsCheckpoint(b)
	}
	if err != nil {
		return nil, nil, &exitError{code: 2, msg: "--checkpoint: " + err.Error()}
	}
	pub, err := checkpointPublicKey(e, publicKey)
	return cp, pub, err
}

// checkpointCells is audit checkpoint over cells: each cell's stored
// checkpoint and the signed root over them, as one file.
func checkpointCells(ctx context.Context, e *env, signer *audit.Signer, out string) error {
	cfg, err := e.config()
	if err != nil {
		return err
	}
	c, err := cellEnv(e, cfg).Checkpoint(ctx, signer)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if out == "" {
		_, err = e.stdout.Write(append(b, '\n'))
		return err
	}
	if err := writeNew(out, append(b, '\n'), 0o644); err != nil {
		return &exitError{code: 2, msg: "--out: " + err.Error()}
	}
	return printJSON(e, map[string]any{"file": out, "time": c.Time, "cells": c.TreeSize, "root": c.Root, "keyId": c.KeyID})
}
