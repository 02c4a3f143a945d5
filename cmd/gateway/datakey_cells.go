package main

import (
	"context"
	"fmt"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/merchant"
)

// The data key's commands over every cell of GATEWAY_CELLS
// (docs/operations.md, "The data key"; the work is internal/app's
// RotateCells and ResealCells).

// overEveryCell opens every cell, each checked (its identity and its data
// key binding: a cell refused is named and nothing is done), and runs fn
// with their keyrings.
func overEveryCell(ctx context.Context, e *env, cfg *config.Config, fn func(ks []app.Keyring) error) error {
	ce := cellEnv(e, cfg)
	cs, closeAll, err := ce.OpenAll(ctx, ce.Names(), false)
	if err != nil {
		return err
	}
	defer closeAll()
	ks := make([]app.Keyring, len(cs))
	for i, c := range cs {
		ks[i] = app.Keyring{Cell: c.Name, DB: c.Store.DB, Sealer: c.Services.Merchants.Sealer()}
	}
	return fn(ks)
}

func printCellsKeyStatus(ctx context.Context, e *env, ks []app.Keyring) error {
	for _, k := range ks {
		fmt.Fprintf(e.stdout, "cell %s: ", k.Cell)
		if err := printKeyStatus(ctx, e, k.DB, k.Sealer); err != nil {
			return fmt.Errorf("cell %s: %w", k.Cell, err)
		}
	}
	return nil
}

func rotateCells(ctx context.Context, e *env, ks []app.Keyring) error {
	r, err := app.RotateCells(ctx, ks)
	if err != nil {
		return err
	}
	if r.Levelled {
		fmt.Fprintf(e.stdout, "data key version %d is now in every cell (a rotation cut short, finished; no new version added)\n", r.Version)
	} else {
		fmt.Fprintf(e.stdout, "data key version %d added in every cell; running gateways seal under it within a minute and re-seal the older values\n", r.Version)
	}
	return printCellsKeyStatus(ctx, e, ks)
}

func resealCells(ctx context.Context, e *env, ks []app.Keyring) error {
	done, err := app.ResealCells(ctx, ks, merchant.RetireAfter)
	for _, k := range ks {
		if r, ok := done[k.Cell]; ok {
			fmt.Fprintf(e.stdout, "cell %s: re-sealed %d values under version %d; retired versions %v\n", k.Cell, r.Values, r.Version, r.Retired)
		}
	}
	if err != nil {
		return err
	}
	return printCellsKeyStatus(ctx, e, ks)
}
