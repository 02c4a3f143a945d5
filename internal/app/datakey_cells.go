package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/cells"
	"github.com/paygate/gateway/internal/merchant"
)

// The data key over cells (docs/scaling.md, docs/operations.md "The data
// key"): every cell is bound to the same data key (serve and every command
// check each cell's binding, naming the cell refused), and a rotation
// gives every cell the same key version, so that a merchant moved between
// cells keeps sealed values its new cell opens. A two-phase commit over
// cells would be a home-made distributed transaction; instead each cell
// is written in its own transaction and a failure part-way names the
// cells done and not (cells.PartialError): the same command again brings
// every cell level.

// Keyring is one cell's database and sealer.
type Keyring struct {
	Cell   string // "" without GATEWAY_CELLS
	DB     *bun.DB
	Sealer *merchant.Sealer
}

// Keyrings are the cells' keyrings, the home cell's first (one without
// GATEWAY_CELLS): serve re-seals each after a rotation.
func (a *App) Keyrings() []Keyring {
	out := make([]Keyring, len(a.cells))
	for i, c := range a.cells {
		out[i] = Keyring{Cell: c.id.Name, DB: c.store.DB, Sealer: c.sealer}
	}
	return out
}

// CellsRotation is what RotateCells did: the version every cell has now,
// and whether it only levelled cells a rotation cut short had left behind.
type CellsRotation struct {
	Version  int  `json:"version"`
	Levelled bool `json:"levelled"`
}

// RotateCells adds one key version to every cell of ks: the same number
// (one past the highest any cell has) and the same wrapped key. When some
// cell lacks a version another has (a rotation that failed part-way), it
// adds those instead, and no new one: running the rotation again finishes
// the one cut short. Every cell's versions are read before anything is
// written, so a cell that cannot be read stops it with nothing written.
func RotateCells(ctx context.Context, ks []Keyring) (CellsRotation, error) {
	have := make(map[string]map[int]bool, len(ks))
	known := map[int][]byte{} // version → its wrapped key, from any cell that has it unretired
	highest := 0
	for _, k := range ks {
		vs, err := merchant.KeyVersions(ctx, k.DB)
		if err != nil {
			return CellsRotation{}, fmt.Errorf("cell %s: %w (nothing rotated)", k.Cell, err)
		}
		have[k.Cell] = map[int]bool{}
		for _, v := range vs {
			have[k.Cell][v.Version] = true
			if _, ok := known[v.Version]; !ok && v.Wrapped != nil {
				known[v.Version] = v.Wrapped
			}
			highest = max(highest, v.Version)
		}
	}
	missing := map[string][]merchant.KeyVersion{}
	for _, k := range ks {
		for v, w := range known {
			if !have[k.Cell][v] {
				missing[k.Cell] = append(missing[k.Cell], merchant.KeyVersion{Version: v, Wrapped: w})
			}
		}
		slices.SortFunc(missing[k.Cell], func(a, b merchant.KeyVersion) int { return a.Version - b.Version })
	}
	if len(missing) > 0 {
		return CellsRotation{Version: highest, Levelled: true}, eachKeyring(ks, func(k Keyring) error {
			for _, kv := range missing[k.Cell] {
				if _, err := k.Sealer.AddVersion(ctx, k.DB, kv); err != nil {
					return err
				}
			}
			return nil
		})
	}
	kv, err := ks[0].Sealer.NewVersion(highest + 1)
	if err != nil {
		return CellsRotation{}, err
	}
	return CellsRotation{Version: kv.Version}, eachKeyring(ks, func(k Keyring) error {
		_, err := k.Sealer.AddVersion(ctx, k.DB, kv)
		return err
	})
}

// Resealed is one cell's re-seal: the values moved and the versions retired.
type Resealed struct {
	Values  int   `json:"values"`
	Version int   `json:"version"`
	Retired []int `json:"retired"`
}

// ResealCells re-seals every cell of ks under its current version and
// retires the versions none of its values needs that are older than
// retireAfter's overlap (Sealer.Reseal, RetireUnused). A re-seal moves one
// row per statement, each only if unchanged, so one cut short is resumed
// by running it again; it returns every cell's that finished.
func ResealCells(ctx context.Context, ks []Keyring, retireAfter time.Duration) (map[string]Resealed, error) {
	out := map[string]Resealed{}
	err := eachKeyring(ks, func(k Keyring) error {
		n, err := k.Sealer.Reseal(ctx, k.DB)
		if err != nil {
			return err
		}
		retired, err := k.Sealer.RetireUnused(ctx, k.DB, retireAfter)
		if err != nil {
			return err
		}
		out[k.Cell] = Resealed{Values: n, Version: int(k.Sealer.CurrentVersion()), Retired: retired}
		return nil
	})
	return out, err
}

// eachKeyring runs fn in every cell of ks (cells.Each: a failure part-way
// is a *cells.PartialError naming the cells done and not).
func eachKeyring(ks []Keyring, fn func(Keyring) error) error {
	byName := make(map[string]Keyring, len(ks))
	names := make([]string, len(ks))
	for i, k := range ks {
		byName[k.Cell], names[i] = k, k.Cell
	}
	_, err := cells.Each(names, func(name string) (any, error) { return nil, fn(byName[name]) })
	var pe *cells.PartialError
	if err != nil && !errors.As(err, &pe) && len(ks) > 1 {
		return fmt.Errorf("written in none of cells %s: %w", strings.Join(names, ", "), err)
	}
	return err
}
