package cellcmd

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/merchant"
)

// The data key's commands' work (docs/operations.md, "The data key"), over
// one database (a keyring without a cell, printed as before cells) or
// every cell of GATEWAY_CELLS (each cell's part printed under its name;
// internal/app RotateCells and ResealCells).

// Keyrings opens every cell, each checked (its identity and its data key
// binding: a cell refused is named and nothing is done), and returns their
// keyrings; the function returned closes them.
func (e Env) Keyrings(ctx context.Context) ([]app.Keyring, func(), error) {
	cs, closeAll, err := e.OpenAll(ctx, e.Names(), false)
	if err != nil {
		return nil, nil, err
	}
	ks := make([]app.Keyring, len(cs))
	for i, c := range cs {
		ks[i] = app.Keyring{Cell: c.Name, DB: c.Store.DB, Sealer: c.Services.Merchants.Sealer()}
	}
	return ks, closeAll, nil
}

// KeyStatus prints each keyring's fingerprint and, per key version, the
// sealed values that still need it: the re-seal's progress.
func KeyStatus(ctx context.Context, w io.Writer, ks []app.Keyring) error {
	for _, k := range ks {
		if k.Cell != "" {
			fmt.Fprintf(w, "cell %s: ", k.Cell)
		}
		if err := keyStatus(ctx, w, k); err != nil {
			return cellErr(k.Cell, err)
		}
	}
	return nil
}

func keyStatus(ctx context.Context, w io.Writer, k app.Keyring) error {
	st, err := k.Sealer.KeyStatus(ctx, k.DB)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "data key fingerprint %s (recorded by the database)\n", k.Sealer.Fingerprint())
	var left int64
	for _, v := range st {
		line := fmt.Sprintf("version %d", v.Version)
		if v.Version == 0 {
			line += " (the data key itself)"
		} else {
			line += " created " + v.CreatedAt.UTC().Format(time.RFC3339)
		}
		if v.Current {
			line += ", current"
		} else {
			left += v.Rows
		}
		if v.RetiredAt != nil {
			line += ", retired " + v.RetiredAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%s: %d sealed values\n", line, v.Rows)
	}
	fmt.Fprintf(w, "re-seal: %d sealed values under an older version\n", left)
	return nil
}

// Rotate adds a key version: to the one database as before cells (two
// rotations at once each get their own number), or the same version to
// every cell (app.RotateCells, which finishes one cut short instead).
func Rotate(ctx context.Context, w io.Writer, ks []app.Keyring) error {
	if len(ks) == 1 && ks[0].Cell == "" {
		v, err := ks[0].Sealer.Rotate(ctx, ks[0].DB)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "data key version %d added; running gateways seal under it within a minute and re-seal the older values\n", v)
		return KeyStatus(ctx, w, ks)
	}
	r, err := app.RotateCells(ctx, ks)
	if err != nil {
		return err
	}
	if r.Levelled {
		fmt.Fprintf(w, "data key version %d is now in every cell (a rotation cut short, finished; no new version added)\n", r.Version)
	} else {
		fmt.Fprintf(w, "data key version %d added in every cell; running gateways seal under it within a minute and re-seal the older values\n", r.Version)
	}
	return KeyStatus(ctx, w, ks)
}

// Reseal moves every sealed value to its database's current version and
// retires the versions none needs (app.ResealCells), each cell in turn.
func Reseal(ctx context.Context, w io.Writer, ks []app.Keyring) error {
	done, err := app.ResealCells(ctx, ks, merchant.RetireAfter)
	for _, k := range ks {
		if r, ok := done[k.Cell]; ok {
			if k.Cell != "" {
				fmt.Fprintf(w, "cell %s: ", k.Cell)
			}
			fmt.Fprintf(w, "re-sealed %d values under version %d; retired versions %v\n", r.Values, r.Version, r.Retired)
		}
	}
	if err != nil {
		return err
	}
	return KeyStatus(ctx, w, ks)
}

func cellErr(cell string, err error) error {
	if cell == "" {
		return err
	}
	return fmt.Errorf("cell %s: %w", cell, err)
}
