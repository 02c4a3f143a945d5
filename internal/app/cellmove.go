package app

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/cellmove"
	"github.com/paygate/gateway/internal/cells"
	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/database"
)

// The wiring of `gateway cells move` over GATEWAY_CELLS: internal/cellmove's
// mover between two cells' databases, driven by the directory in the home
// cell (cells.MoveDirectory implements cellmove.Directory).

var _ cellmove.Directory = (*cells.MoveDirectory)(nil)

// DirectoryMover is a mover between two cells of GATEWAY_CELLS driven by
// the directory: the source is where the directory places the merchant,
// or from when the operator names it (a move resumed after its switch,
// when the directory already places the merchant in the target).
func DirectoryMover(ctx context.Context, cfg *config.Config, shopNo, from, to string) (*cellmove.Mover, func(), error) {
	urls := map[string]string{}
	for _, c := range cfg.Cells {
		urls[c.Name] = c.URL
	}
	for flag, name := range map[string]string{"--to": to, "--from": from} {
		if name != "" && urls[name] == "" {
			return nil, nil, fmt.Errorf("%s: %q is not a cell of GATEWAY_CELLS", flag, name)
		}
	}
	dbs, close, err := OpenMoveDBs(ctx, urls)
	if err != nil {
		return nil, nil, err
	}
	dir := cells.NewDirectory(dbs[cfg.HomeCell().Name])
	ent, found, err := dir.Lookup(ctx, shopNo)
	if err == nil && !found {
		err = fmt.Errorf("merchant %s not found in the directory", shopNo)
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
	// The removal waits out the routers' forwarding cache (cellmove.Mover.RemoveAfter).
	return &cellmove.Mover{From: cellmove.Cell{Name: from, DB: dbs[from]}, To: cellmove.Cell{Name: to, DB: dbs[to]},
		Dir: cells.NewMoveDirectory(dir), RemoveAfter: cells.CacheTTL + time.Second}, close, nil
}

// OpenMoveDBs opens each named URL; the function returned closes them all.
func OpenMoveDBs(ctx context.Context, urls map[string]string) (map[string]*bun.DB, func(), error) {
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
