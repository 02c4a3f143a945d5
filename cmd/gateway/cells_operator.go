package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/paygate/gateway/internal/app"
)

// The operator's data (BINs, FX rates, the sanctions list) is every
// cell's: a card's BIN, a conversion's rate and a remittance's screening
// must not depend on the cell its merchant is in (docs/scaling.md,
// "Operator data in every cell"). With GATEWAY_CELLS, the commands that
// write it write every cell, each in its own transaction (the domain's own
// write, as without cells): a two-phase commit over cells would be a
// home-made distributed transaction for data that is safe to write again.
// So a failure part-way names the cells that have the change and those
// that do not, and running the same command again brings them level;
// `audit verify` over cells compares them.

// withEveryCell parses fs and runs fn once: on the one database without
// cells, printing what fn returns as before; with cells, in every cell in
// turn, printing each cell's result by name.
func withEveryCell(ctx context.Context, e *env, fs *flag.FlagSet, args []string, fn func(l *app.Services) (any, error)) error {
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	if len(cfg.Cells) == 0 {
		return withLedger(ctx, e, fs, args, func(l *app.Services) error {
			out, err := fn(l)
			if err != nil {
				return err
			}
			return printJSON(e, out)
		})
	}
	results := map[string]any{}
	var done, failed []string
	var firstErr error
	for _, c := range cfg.Cells {
		out, err := inCell(ctx, e, c.Name, fn)
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s (%v)", c.Name, err))
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		results[c.Name] = out
		done = append(done, c.Name)
	}
	if len(done) == 0 {
		// Nothing written anywhere: the error as one database gives it
		// (a bad flag is the same in every cell).
		return cliError(firstErr)
	}
	if err := printJSON(e, map[string]any{"cells": results}); err != nil {
		return err
	}
	if len(failed) > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("written in cells %s; NOT in %s: run the same command again to bring every cell level",
			strings.Join(done, ", "), strings.Join(failed, "; "))}
	}
	return nil
}

// inCell runs fn on cell name's database.
func inCell(ctx context.Context, e *env, name string, fn func(l *app.Services) (any, error)) (any, error) {
	prev := e.cell
	e.cell = name
	defer func() { e.cell = prev }()
	s, l, err := openLedger(ctx, e)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	defer l.Close()
	return fn(l)
}
