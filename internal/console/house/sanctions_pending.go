package house

import (
	"context"
	"sync"
	"time"
)

// Uploaded sanctions lists waiting for their confirmation. Loading
// replaces the whole list, so the upload is parsed and shown first; the
// confirmation carries a one-shot key (sanctionsFormKey, as the deposit's
// confirmation does) naming the parsed list kept here. The first
// confirmation with a key loads it; the same key again (a double click, a
// reload that re-posts) waits for that load and answers its result, never
// loading twice. The ledger keeps the deposit's key; LoadSanctions has
// no idempotency of its own, so the console keeps this one, in memory (the
// file's bytes, at most sanctionsUploadMax each, not its entries): a
// restart forgets the uploads (upload again), never a load.

const (
	// sanctionsPendingMax bounds the uploads kept (each at most
	// sanctionsUploadMax of file); the oldest goes first.
	sanctionsPendingMax = 4
	// sanctionsPendingFor is how long an upload waits for its
	// confirmation, and a confirmed key keeps answering its result.
	sanctionsPendingFor = 15 * time.Minute
	// sanctionsLoadTimeout bounds one load, detached from its request: a
	// list of sanctionsUploadMax is a few seconds' insert.
	sanctionsLoadTimeout = 2 * time.Minute
)

type pendingLoad struct {
	userID int64 // only the user who uploaded confirms
	made   time.Time
	file   string
	data   []byte // the file, checked; dropped once loaded
	count  int

	taken   bool          // the first confirmation came
	done    chan struct{} // closed when its load ended
	version int64         // what it loaded
	err     error
}

type pendingLoads struct {
	mu sync.Mutex
	m  map[string]*pendingLoad
}

// add keeps an upload under key, dropping expired ones and, past the
// bound, the oldest.
func (p *pendingLoads) add(key string, l *pendingLoad) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]*pendingLoad{}
	}
	for k, x := range p.m {
		if l.made.Sub(x.made) > sanctionsPendingFor {
			delete(p.m, k)
		}
	}
	for len(p.m) >= sanctionsPendingMax {
		oldest := ""
		for k, x := range p.m {
			if oldest == "" || x.made.Before(p.m[oldest].made) {
				oldest = k
			}
		}
		delete(p.m, oldest)
	}
	l.done = make(chan struct{})
	p.m[key] = l
}

// take claims the upload of key for user at now. found is false for an
// unknown, expired or another user's key; first is true for the one
// confirmation that is to load it.
func (p *pendingLoads) take(key string, user int64, now time.Time) (l *pendingLoad, found, first bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, ok := p.m[key]
	if !ok || l.userID != user || now.Sub(l.made) > sanctionsPendingFor {
		return nil, false, false
	}
	if l.taken {
		return l, true, false
	}
	l.taken = true
	return l, true, true
}

// finish records the load's result and wakes the confirmations waiting.
func (p *pendingLoads) finish(l *pendingLoad, version int64, err error) {
	p.mu.Lock()
	l.version, l.err, l.data = version, err, nil
	p.mu.Unlock()
	close(l.done)
}

// wait waits for the first confirmation's load.
func (p *pendingLoads) wait(ctx context.Context, l *pendingLoad) (version int64, err error) {
	select {
	case <-l.done:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return l.version, l.err
}
