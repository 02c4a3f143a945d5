// Package cellcmd is the operator's commands' side of the cells
// (docs/scaling.md): opening a cell's database as the commands do, the
// directory's writes and look-ups of `cells init` and `merchant create`,
// the operator's data written to every cell, and audit verify and
// checkpoints over all of them (internal/cells/cellaudit). cmd/gateway
// parses the flags and prints; this package does the work, so that the
// command stays of a readable size.
package cellcmd

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/cells"
	"github.com/paygate/gateway/internal/cells/cellaudit"
	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/domains"
	"github.com/paygate/gateway/ledger"
)

// Env is what the commands hand down: the configuration (with cells, the
// whole of GATEWAY_CELLS), where PostgreSQL's own output and the log go,
// and how long a standby read waits.
type Env struct {
	Cfg      *config.Config
	LogOut   io.Writer
	Log      *slog.Logger
	ReadWait time.Duration
}

// Open opens cfg's database (one cell's, with config.ForCell) with a
// ledger of one writer shard and the domains with cfg's settings. In a
// cell (cell non-empty) the database must be that cell (cells.Check), so
// that what the command mints carries the cell, as serve's; lenient
// (audit verify over cells) opens it anyway, and verify names the fault.
func Open(ctx context.Context, cfg *config.Config, cell string, lenient bool, logOut io.Writer, log *slog.Logger) (*app.Store, *app.Services, error) {
	s, err := app.OpenStore(ctx, cfg, logOut, database.DBOptions{ConnsMax: 8})
	if err != nil {
		return nil, nil, err
	}
	sealer, err := app.LoadSealer(ctx, cfg, s.DB)
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	var id cells.Identity
	if cell != "" {
		if id, err = cells.Check(ctx, s.DB, cell); err != nil && !lenient {
			s.Close()
			return nil, nil, err
		}
	}
	l := ledger.New(s.DB, ledger.Config{Logger: log, Shards: 1, Domains: domains.All()})
	return s, app.NewCellServices(l, sealer, cfg, id), nil
}

// Cell is one cell opened: its store, its services, and what verify over
// cells needs of it; its reads on its standby where GATEWAY_CELLS_READ_URLS
// names one.
type Cell struct {
	cellaudit.Verifier
	Store    *app.Store
	Services *app.Services
}

// OpenAll opens the cells named; the function returned closes them.
func (e Env) OpenAll(ctx context.Context, names []string, lenient bool) ([]Cell, func(), error) {
	var out []Cell
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	for _, name := range names {
		cfg, err := e.cell(name)
		var s *app.Store
		var l *app.Services
		if err == nil {
			s, l, err = Open(ctx, cfg, name, lenient, e.LogOut, e.Log)
		}
		if err == nil {
			closers = append(closers, s.Close, l.Close)
			var closeReads func()
			closeReads, err = app.AttachReadRoute(e.Log, l.Ledger, cfg.ReadURL, e.ReadWait, database.DBOptions{ConnsMax: 8})
			closers = append(closers, closeReads)
		}
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("cell %s: %w", name, err)
		}
		out = append(out, Cell{cellaudit.Verifier{Cell: cellaudit.Cell{Name: name, DB: s.DB}, Audit: audit.New(l.Ledger)}, s, l})
	}
	return out, closeAll, nil
}

// cell is the configuration of cell name.
func (e Env) cell(name string) (*config.Config, error) {
	for _, c := range e.Cfg.Cells {
		if c.Name == name {
			return e.Cfg.ForCell(c), nil
		}
	}
	return nil, fmt.Errorf("%q is not a cell of GATEWAY_CELLS", name)
}

// Names are GATEWAY_CELLS' names, in its order; nil without cells.
func (e Env) Names() []string {
	var names []string
	for _, c := range e.Cfg.Cells {
		names = append(names, c.Name)
	}
	return names
}

// Each runs fn in every cell (cells.Each: each its own transaction, a
// failure part-way naming the cells done and not).
func (e Env) Each(ctx context.Context, fn func(l *app.Services) (any, error)) (map[string]any, error) {
	return cells.Each(e.Names(), func(name string) (any, error) {
		cs, closeAll, err := e.OpenAll(ctx, []string{name}, false)
		if err != nil {
			return nil, err
		}
		defer closeAll()
		return fn(cs[0].Services)
	})
}

// Verify is audit verify over every cell, printed to w; it reports
// whether everything verified.
func (e Env) Verify(ctx context.Context, cp *cellaudit.CellsCheckpoint, pub ed25519.PublicKey, w io.Writer, asJSON bool) (bool, error) {
	cs, closeAll, err := e.OpenAll(ctx, e.Names(), true)
	if err != nil {
		return false, err
	}
	defer closeAll()
	rep, err := cellaudit.Verify(ctx, cells.NewDirectory(cs[0].Store.DB), verifiers(cs), cp, pub)
	if err != nil {
		return false, err
	}
	return rep.OK, rep.Print(w, asJSON)
}

// Checkpoint signs and stores every cell's checkpoint and the root over
// them.
func (e Env) Checkpoint(ctx context.Context, signer *audit.Signer) (*cellaudit.CellsCheckpoint, error) {
	cs, closeAll, err := e.OpenAll(ctx, e.Names(), false)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	return cellaudit.Checkpoint(ctx, verifiers(cs), signer)
}

func verifiers(cs []Cell) []cellaudit.Verifier {
	vs := make([]cellaudit.Verifier, len(cs))
	for i, c := range cs {
		vs[i] = c.Verifier
	}
	return vs
}
