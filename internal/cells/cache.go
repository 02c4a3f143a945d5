package cells

import (
	"context"
	"sync"
	"time"
)

// CacheTTL is how long a router believes what the directory said of a
// shop number. A change of the directory (a move's start or switch)
// reaches every router within it: internal/cellmove waits this long after
// marking a merchant moving before it takes the merchant's tail.
const CacheTTL = 2 * time.Second

// cacheEntriesMax bounds the cache: shop numbers nobody has are cached
// too (briefly), so a caller sending random ones cannot grow it without
// bound; when full it starts again empty.
const cacheEntriesMax = 100_000

// Cache is a Directory's lookups, remembered for CacheTTL.
type Cache struct {
	dir *Directory
	now func() time.Time

	mu      sync.Mutex
	entries map[string]cached
}

type cached struct {
	e     Entry
	found bool
	until time.Time
}

// NewCache caches d's lookups.
func NewCache(d *Directory) *Cache {
	return &Cache{dir: d, now: time.Now, entries: map[string]cached{}}
}

// Lookup is Directory.Lookup, from the cache when it is fresh.
func (c *Cache) Lookup(ctx context.Context, shopNo string) (Entry, bool, error) {
	now := c.now()
	c.mu.Lock()
	h, ok := c.entries[shopNo]
	c.mu.Unlock()
	if ok && now.Before(h.until) {
		return h.e, h.found, nil
	}
	e, found, err := c.dir.Lookup(ctx, shopNo)
	if err != nil {
		return e, false, err
	}
	c.mu.Lock()
	if len(c.entries) >= cacheEntriesMax {
		c.entries = map[string]cached{}
	}
	c.entries[shopNo] = cached{e: e, found: found, until: now.Add(CacheTTL)}
	c.mu.Unlock()
	return e, found, nil
}
