package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/cells"
	"github.com/paygate/gateway/internal/cells/cellaudit"
	"github.com/paygate/gateway/internal/database"
)

// The operator's commands over every cell (docs/scaling.md): the
// operator's data written to each (cells.Each), audit verify and
// checkpoints over all (internal/cells/cellaudit).

// withEveryCell is withLedger for the operator's data (BINs, rates, the
// sanctions list): with GATEWAY_CELLS, fn runs in every cell.
func withEveryCell(ctx context.Context, e *env, fs *flag.FlagSet, args []string, fn func(l *app.Services) (any, error)) error {
	names, err := cellNames(e)
	if err != nil || names == nil {
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
	out, err := cells.Each(names, func(name string) (any, error) {
		cs, closeAll, err := openCells(ctx, e, []string{name})
		if err != nil {
			return nil, err
		}
		defer closeAll()
		return fn(cs[0].services)
	})
	if len(out) > 0 {
		_ = printJSON(e, map[string]any{"cells": out})
	}
	return cliError(err)
}

// cellNames are GATEWAY_CELLS' names; nil without cells.
func cellNames(e *env) ([]string, error) {
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, c := range cfg.Cells {
		names = append(names, c.Name)
	}
	return names, nil
}

// auditCell is one cell opened: its services, reads on its standby
// where GATEWAY_CELLS_READ_URLS names one (attachReadRoute).
type auditCell struct {
	cellaudit.Verifier
	store    *app.Store
	services *app.Services
}

// openCells opens the cells named; the function returned closes them.
func openCells(ctx context.Context, e *env, names []string) ([]auditCell, func(), error) {
	var out []auditCell
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	defer func(prev string) { e.cell = prev }(e.cell)
	for _, name := range names {
		e.cell = name
		s, l, err := openLedger(ctx, e)
		if err == nil {
			closers = append(closers, s.Close, l.Close)
			var closeReads func()
			closeReads, err = attachReadRoute(e, l.Ledger, database.DBOptions{ConnsMax: 8}, readWaitOperatorMs*time.Millisecond)
			closers = append(closers, closeReads)
		}
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("cell %s: %w", name, err)
		}
		out = append(out, auditCell{cellaudit.Verifier{Cell: cellaudit.Cell{Name: name, DB: s.DB}, Audit: audit.New(l.Ledger)}, s, l})
	}
	return out, closeAll, nil
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
	names, err := cellNames(e)
	if err != nil || names == nil {
		return err != nil, err
	}
	if shopNo != "" {
		cfg, _ := e.config()
		e.cell, err = cellOfShop(ctx, e, cfg, shopNo)
		return err != nil, err
	}
	cp, pub, err := cellsCheckpointFile(e, cpFile, pubFile)
	if err != nil {
		return true, err
	}
	e.verifying = true
	cs, closeAll, err := openCells(ctx, e, names)
	if err != nil {
		return true, err
	}
	defer closeAll()
	vs := make([]cellaudit.Verifier, len(cs))
	for i, c := range cs {
		vs[i] = c.Verifier
	}
	rep, err := cellaudit.Verify(ctx, cells.NewDirectory(cs[0].store.DB), vs, cp, pub)
	if err == nil {
		err = rep.Print(e.stdout, asJSON)
	}
	if err == nil && !rep.OK {
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
	if publicKey != "" {
		pub, err := readPublicKey(publicKey)
		return cp, pub, err
	}
	if e.getenv(checkpointKeyVar) == "" {
		return nil, nil, usageError("--checkpoint needs --public-key (or " + checkpointKeyVar + ")")
	}
	signer, err := checkpointSigner(e, "")
	if err != nil {
		return nil, nil, err
	}
	return cp, signer.Public(), nil
}

// checkpointCells is audit checkpoint over cells: each cell's stored
// checkpoint and the signed root over them, as one file.
func checkpointCells(ctx context.Context, e *env, signer *audit.Signer, names []string, out string) error {
	cs, closeAll, err := openCells(ctx, e, names)
	if err != nil {
		return err
	}
	defer closeAll()
	vs := make([]cellaudit.Verifier, len(cs))
	for i, c := range cs {
		vs[i] = c.Verifier
	}
	c, err := cellaudit.Checkpoint(ctx, vs, signer)
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
