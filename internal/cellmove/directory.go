package cellmove

import (
	"context"
	"sync"
)

// Directory is what a move needs of the cells' directory (internal/cells
// implements it; the lead wires the two). Each call is idempotent: a
// resumed move may repeat the last one.
type Directory interface {
	// BeginMove marks the merchant moving from one cell to another: its
	// requests answer 503 with Retry-After, its cards' network messages
	// are held or declined, the source's workers skip it.
	BeginMove(ctx context.Context, shopNo, from, to string) error
	// Resume makes the merchant active in from again: a move rolled back.
	Resume(ctx context.Context, shopNo, from string) error
	// Switch makes the merchant active in to: requests flow there.
	Switch(ctx context.Context, shopNo, to string) error
}

// LocalDirectory is the directory of `gateway cells move` when none is
// configured, and of the tests: it remembers where each merchant it was
// told about lives and whether it is moving, in memory.
type LocalDirectory struct {
	mu      sync.Mutex
	cell    map[string]string
	moving  map[string]bool
	changed chan struct{} // closed and replaced on every change
}

// NewLocalDirectory returns an empty directory.
func NewLocalDirectory() *LocalDirectory {
	return &LocalDirectory{cell: map[string]string{}, moving: map[string]bool{}, changed: make(chan struct{})}
}

// Place records where a merchant lives, active.
func (d *LocalDirectory) Place(shopNo, cell string) {
	d.set(shopNo, cell, false)
}

// Lookup returns the merchant's cell, whether it is moving, and a channel
// closed at the next change.
func (d *LocalDirectory) Lookup(shopNo string) (cell string, moving bool, changed <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cell[shopNo], d.moving[shopNo], d.changed
}

func (d *LocalDirectory) set(shopNo, cell string, moving bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cell[shopNo], d.moving[shopNo] = cell, moving
	close(d.changed)
	d.changed = make(chan struct{})
}

// BeginMove implements Directory.
func (d *LocalDirectory) BeginMove(_ context.Context, shopNo, from, _ string) error {
	d.set(shopNo, from, true)
	return nil
}

// Resume implements Directory.
func (d *LocalDirectory) Resume(_ context.Context, shopNo, from string) error {
	d.set(shopNo, from, false)
	return nil
}

// Switch implements Directory.
func (d *LocalDirectory) Switch(_ context.Context, shopNo, to string) error {
	d.set(shopNo, to, false)
	return nil
}
