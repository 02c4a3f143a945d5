package app

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/paygate/gateway/internal/console"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/remittance"
)

// The operator's lists across merchants over cells (docs/scaling.md, "The
// console over cells"): each reads every cell at once with the one cell's
// query and merges the rows in that query's order, so that a page, its
// bound and its cursor are what one database gives. A cell that cannot be
// read is named on the page (console.NoteCellDown) and the other cells'
// rows are shown; every cell down is the page's error.

// fanOut is read in every cell, merged by order, limit rows at most.
func fanOut[T any](ctx context.Context, a *App, read func(*Services) ([]T, error), order func(x, y T) int, limit int) ([]T, error) {
	type result struct {
		rows []T
		err  error
	}
	res := make([]result, len(a.cells))
	var wg sync.WaitGroup
	for i, c := range a.cells {
		wg.Go(func() {
			rows, err := read(c.services)
			res[i] = result{rows, err}
		})
	}
	wg.Wait()
	var all []T
	var firstErr error
	down := 0
	for i, r := range res {
		if r.err != nil {
			a.log.Warn("console: a cell could not be read", "cell", a.cells[i].id.Name, "error", r.err.Error())
			console.NoteCellDown(ctx, a.cells[i].id.Name)
			down++
			if firstErr == nil {
				firstErr = r.err
			}
			continue
		}
		all = append(all, r.rows...)
	}
	if down == len(a.cells) {
		return nil, firstErr
	}
	slices.SortStableFunc(all, order)
	return all[:min(len(all), limit)], nil
}

// cellsMerchants are the home cell's merchants, with the list (here) and
// the creation (consoledata.go) over every cell.
type cellsMerchants struct {
	*merchant.Service
	a *App
}

// List is every cell's merchants after id after, by id: a merchant's id
// carries its cell's range, so the order is one database's and the page's
// cursor works unchanged.
func (m cellsMerchants) List(ctx context.Context, after int64, limit int) ([]merchant.Merchant, error) {
	return fanOut(ctx, m.a, func(s *Services) ([]merchant.Merchant, error) { return s.Merchants.List(ctx, after, limit) },
		func(x, y merchant.Merchant) int { return cmp.Compare(x.ID, y.ID) }, limit)
}

// cellsDeliveries are the home cell's deliveries, with the stuck callbacks
// of every cell, oldest event first.
type cellsDeliveries struct {
	*delivery.Store
	a *App
}

func (d cellsDeliveries) Stuck(ctx context.Context, limit int) ([]delivery.StuckDelivery, error) {
	return fanOut(ctx, d.a, func(s *Services) ([]delivery.StuckDelivery, error) { return s.Deliveries.Stuck(ctx, limit) },
		func(x, y delivery.StuckDelivery) int {
			return cmp.Or(x.CreatedAt.Compare(y.CreatedAt), strings.Compare(x.EventID, y.EventID))
		}, limit)
}

// cellsRemittances are the home cell's remittances, with the stuck ones
// of every cell, oldest first.
type cellsRemittances struct {
	*remittance.Service
	a *App
}

func (r cellsRemittances) Stuck(ctx context.Context, before time.Time, limit int) ([]remittance.StuckRemittance, error) {
	return fanOut(ctx, r.a, func(s *Services) ([]remittance.StuckRemittance, error) { return s.Remit.Stuck(ctx, before, limit) },
		func(x, y remittance.StuckRemittance) int {
			return cmp.Or(x.CreatedAt.Compare(y.CreatedAt), strings.Compare(x.TxID, y.TxID))
		}, limit)
}

// cellsHolds are the holds near expiry of every cell, by expiry then
// authorization id: the order of the page's keyset cursor (afterAt,
// afterId), which so pages over the merged list as over one cell's.
type cellsHolds struct{ a *App }

func (h cellsHolds) HoldsExpiring(ctx context.Context, until, afterAt time.Time, afterID string, limit int) ([]network.ExpiringHold, error) {
	return fanOut(ctx, h.a, func(s *Services) ([]network.ExpiringHold, error) {
		return s.Network.HoldsExpiring(ctx, until, afterAt, afterID, limit)
	}, func(x, y network.ExpiringHold) int {
		return cmp.Or(x.ExpiresAt.Compare(y.ExpiresAt), strings.Compare(x.AuthID, y.AuthID))
	}, limit)
}
