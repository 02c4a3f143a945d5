package console

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/adjustment"
	"github.com/paygate/gateway/internal/console/store"
)

// The console over cells (docs/scaling.md, "The console over cells"): the
// router in front of the cells' consoles (internal/app) answers a merchant
// that is moving itself, and the domains' wrappers that read or write
// every cell name a cell they could not reach, which the page then shows
// above what the other cells gave. Without cells none of this is used.

type cellsDownKey struct{}

// cellsDownList collects, for one request, the cells not reached.
type cellsDownList struct {
	mu    sync.Mutex
	names []string
}

// withCellsDown gives the request a place for the cells it could not
// reach (ServeHTTP, for every request: a pointer, nothing more).
func withCellsDown(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), cellsDownKey{}, &cellsDownList{}))
}

// NoteCellDown records that cell could not be read or written for the
// request of ctx: its page names it (the layout's "Not reachable"). A
// context of no console request is ignored.
func NoteCellDown(ctx context.Context, cell string) {
	l, _ := ctx.Value(cellsDownKey{}).(*cellsDownList)
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !slices.Contains(l.names, cell) {
		l.names = append(l.names, cell)
		slices.Sort(l.names)
	}
}

func cellsDown(ctx context.Context) []string {
	l, _ := ctx.Value(cellsDownKey{}).(*cellsDownList)
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.names)
}

// Moving answers a page of a merchant that is moving between cells: 503
// with Retry-After (the directory's cache lifetime), nothing done, the
// shared error page saying to try again. The router answers it before
// any cell's console sees the request.
func (s *Server) Moving(w http.ResponseWriter, r *http.Request, retryAfter time.Duration) {
	s.unavailable(w, r, retryAfter, "This merchant is moving between cells: nothing was done. Try again in a few seconds.")
}

// DirectoryDown answers a page whose merchant the directory could not
// place (its database unreachable): 503 with Retry-After, nothing done.
func (s *Server) DirectoryDown(w http.ResponseWriter, r *http.Request, retryAfter time.Duration) {
	s.unavailable(w, r, retryAfter, "The directory of merchants is unavailable: nothing was done. Try again in a few seconds.")
}

func (s *Server) unavailable(w http.ResponseWriter, r *http.Request, retryAfter time.Duration, msg string) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(retryAfter.Seconds()))))
	s.fail(w, r, http.StatusServiceUnavailable, msg)
}

// cellAdjustments are a cell's adjustments as the home cell's house users
// propose and decide them (a HouseOnly console over another cell): the
// acting user's mirror is made in the cell first, for the adjustment's
// foreign keys to it (store.MirrorHouseUser).
type cellAdjustments struct {
	Adjustments
	home *store.Store
	cell bun.IDB
}

func (a cellAdjustments) Propose(ctx context.Context, actor adjustment.Actor, in adjustment.ProposeInput) (*adjustment.Proposal, error) {
	if err := a.home.MirrorHouseUser(ctx, a.cell, actor.UserID); err != nil {
		return nil, err
	}
	return a.Adjustments.Propose(ctx, actor, in)
}

func (a cellAdjustments) Approve(ctx context.Context, actor adjustment.Actor, merchant, id int64) (*adjustment.Proposal, error) {
	if err := a.home.MirrorHouseUser(ctx, a.cell, actor.UserID); err != nil {
		return nil, err
	}
	return a.Adjustments.Approve(ctx, actor, merchant, id)
}

func (a cellAdjustments) Reject(ctx context.Context, actor adjustment.Actor, merchant, id int64) (*adjustment.Proposal, error) {
	if err := a.home.MirrorHouseUser(ctx, a.cell, actor.UserID); err != nil {
		return nil, err
	}
	return a.Adjustments.Reject(ctx, actor, merchant, id)
}
