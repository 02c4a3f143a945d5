package app

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/cells"
	"github.com/paygate/gateway/internal/console"
	"github.com/paygate/gateway/internal/fx"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// The home cell's console over cells (docs/scaling.md, "The console over
// cells"): the operator's pages that are no one merchant's are served by
// the home cell's console, whose domains are here given what crosses cells.
// The lists across merchants read every cell (consolelists.go); a new
// merchant goes to a cell and into the directory as `merchant create` puts
// it; the operator's data (BINs, FX rates, the sanctions list) is written
// to every cell by the CLI's one command (cells.Each). Everything else is
// the home cell's own.

// overCells gives cfg, the home cell's console, the domains over cells.
func (a *App) overCells(cfg *console.Config) {
	home := a.cells[0].services
	cfg.Merchants = cellsMerchants{Service: home.Merchants, a: a}
	cfg.Deliveries = cellsDeliveries{Store: home.Deliveries, a: a} // consolelists.go
	cfg.Remittances = cellsRemittances{Service: home.Remit, a: a}
	cfg.Holds = cellsHolds{a: a}
	cfg.Cards = everyCellCards{Service: home.Cards, a: a}
	cfg.Rates = everyCellRates{Service: home.FX, a: a}
	cfg.Sanctions = everyCellSanctions{a: a}
}

// CreateMerchant creates the merchant in the cell with the fewest
// merchants and places it in the directory, as `merchant create` does
// without --cell. Should the placing fail, the merchant exists unplaced
// (unreachable, never half-routed) and `gateway cells init` places it: a
// 409 that says so.
func (m cellsMerchants) CreateMerchant(ctx context.Context, spec merchant.Spec) (*merchant.Merchant, *merchant.Credentials, error) {
	dir := cells.NewDirectory(m.a.cells[0].store.DB)
	name, err := dir.Emptiest(ctx, m.a.cellNames())
	if err != nil {
		return nil, nil, err
	}
	c := m.a.cellNamed(name)
	if c == nil {
		return nil, nil, errors.New("console: the emptiest cell " + name + " is not served")
	}
	created, creds, err := c.services.Merchants.CreateMerchant(ctx, spec)
	if err != nil {
		return nil, nil, err
	}
	if err := dir.Place(ctx, cells.Entry{ShopNo: created.ShopNo, MerchantID: created.ID, Cell: name}); err != nil {
		m.a.log.Error("console: a merchant was created but not placed in the directory", "shop_no", created.ShopNo, "cell", name, "error", err.Error())
		return nil, nil, postings.Errorf(postings.ESTATE, "merchant %s was created in cell %s but not placed in the directory: run `gateway cells init` to place it", created.ShopNo, name)
	}
	return created, creds, nil
}

// everyCellCards are the home cell's cards, with a BIN written to every cell.
type everyCellCards struct {
	*cards.Service
	a *App
}

func (c everyCellCards) UpsertBIN(ctx context.Context, b cards.BIN) error {
	_, err := c.a.eachCell(ctx, func(s *Services) (any, error) { return nil, s.Cards.UpsertBIN(ctx, b) })
	return err
}

// everyCellRates are the home cell's FX rates, with a rate set in every
// cell; the home cell's answer is shown.
type everyCellRates struct {
	*fx.Service
	a *App
}

func (r everyCellRates) Set(ctx context.Context, base, quote, mid string, spreadBps int64) (*fx.Rate, error) {
	res, err := r.a.eachCell(ctx, func(s *Services) (any, error) { return s.FX.Set(ctx, base, quote, mid, spreadBps) })
	if err != nil {
		return nil, err
	}
	return res[r.a.cells[0].id.Name].(*fx.Rate), nil
}

// everyCellSanctions loads the sanctions list into every cell; the home
// cell's version is the one shown (each cell numbers its own loads).
type everyCellSanctions struct{ a *App }

func (l everyCellSanctions) LoadSanctions(ctx context.Context, r io.Reader) (int64, int, error) {
	// The console hands the upload it keeps in memory (at most 8 MiB);
	// every cell reads its own copy.
	data, err := io.ReadAll(r)
	if err != nil {
		return 0, 0, err
	}
	type loaded struct {
		version int64
		n       int
	}
	res, err := l.a.eachCell(ctx, func(s *Services) (any, error) {
		v, n, err := s.Remit.LoadSanctions(ctx, bytes.NewReader(data))
		return loaded{v, n}, err
	})
	if err != nil {
		return 0, 0, err
	}
	home := res[l.a.cells[0].id.Name].(loaded)
	return home.version, home.n, nil
}

// eachCell runs fn in every cell, the home cell first, as the CLI's
// operator commands do (cells.Each). A write refused in the first cell is
// that refusal (nothing written anywhere: the page names the field). A
// write that reached some cells and not others is 503: the cells not
// reached are named on the page, and the same form sent again brings them
// level, as the CLI's same command run again does.
func (a *App) eachCell(ctx context.Context, fn func(s *Services) (any, error)) (map[string]any, error) {
	res, err := cells.Each(a.cellNames(), func(name string) (any, error) { return fn(a.cellNamed(name).services) })
	var pe *cells.PartialError
	if !errors.As(err, &pe) {
		return res, err
	}
	a.log.Warn("console: an operator's data reached some cells only", "error", pe.Error())
	for _, name := range a.cellNames() {
		if _, done := res[name]; !done {
			console.NoteCellDown(ctx, name)
		}
	}
	return nil, postings.Errorf(postings.EUNAVAILABLE, "%s", pe.Error())
}

// cellNames are the cells' names, the home cell's first.
func (a *App) cellNames() []string {
	names := make([]string, len(a.cells))
	for i, c := range a.cells {
		names[i] = c.id.Name
	}
	return names
}

// cellNamed is the cell of that name; nil when none.
func (a *App) cellNamed(name string) *cell {
	for _, c := range a.cells {
		if c.id.Name == name {
			return c
		}
	}
	return nil
}
