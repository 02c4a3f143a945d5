package app

import (
	"context"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/cellmove"
	"github.com/paygate/gateway/internal/cells"
)

// forwarder follows a network id from the cell it names (crd_<cell>…) to
// the cell that has it now, through the forwarding the source of each move
// keeps (internal/cellmove's Forward; docs/scaling.md, "Network messages
// of a moving merchant"). What it reads it keeps for cells.CacheTTL, like
// the directory's cache: a move's pause or switch reaches the router
// within it. A cell no merchant ever left costs one query per CacheTTL
// (whether it forwards anything), not one per message.
type forwarder struct {
	dbs map[string]bun.IDB
	now func() time.Time

	mu  sync.Mutex
	has map[string]cachedHas
	ids map[string]cachedForward
}

type cachedHas struct {
	has   bool
	until time.Time
}

type cachedForward struct {
	to    string
	found bool
	until time.Time
}

// forwardEntriesMax bounds the ids remembered, as cells.Cache bounds
// shop numbers: when full it starts again empty.
const forwardEntriesMax = 100_000

func newForwarder(dbs map[string]bun.IDB) *forwarder {
	return &forwarder{dbs: dbs, now: time.Now, has: map[string]cachedHas{}, ids: map[string]cachedForward{}}
}

// resolve is the cell to send a message about id to, starting from the
// cell the id names, and paused when the id's merchant is in a move's
// pause. A chain of moves (a1 to b2 to c3) is followed, at most one hop
// per cell. When a cell cannot be read, the message goes where the chain
// has reached, which answers as it can (as before forwarding existed).
func (f *forwarder) resolve(ctx context.Context, cell, id string) (to string, paused bool) {
	for range len(f.dbs) {
		next, found, err := f.forward(ctx, cell, id)
		switch {
		case err != nil || !found:
			return cell, false
		case next == "":
			return cell, true
		}
		cell = next
	}
	return cell, false
}

// forward is cellmove.Forward of cell's database, cached.
func (f *forwarder) forward(ctx context.Context, cell, id string) (string, bool, error) {
	db := f.dbs[cell]
	if db == nil {
		return "", false, nil
	}
	now := f.now()
	f.mu.Lock()
	h, okHas := f.has[cell]
	e, okID := f.ids[cell+" "+id]
	f.mu.Unlock()
	if !okHas || !now.Before(h.until) {
		has, err := cellmove.HasForwards(ctx, db)
		if err != nil {
			return "", false, err
		}
		h = cachedHas{has: has, until: now.Add(cells.CacheTTL)}
		f.mu.Lock()
		f.has[cell] = h
		f.mu.Unlock()
	}
	if !h.has {
		return "", false, nil
	}
	if okID && now.Before(e.until) {
		return e.to, e.found, nil
	}
	to, found, err := cellmove.Forward(ctx, db, id)
	if err != nil {
		return "", false, err
	}
	f.mu.Lock()
	if len(f.ids) >= forwardEntriesMax {
		f.ids = map[string]cachedForward{}
	}
	f.ids[cell+" "+id] = cachedForward{to: to, found: found, until: now.Add(cells.CacheTTL)}
	f.mu.Unlock()
	return to, found, nil
}
