package delivery

import (
	"sync"
	"time"
)

// secretCache keeps the opened webhook secrets of the claimed deliveries,
// so that a claim batch does not read and open them again each time (bench
// row 6a: a statement and one or two AES-GCM opens per merchant per batch
// were the p99's regression). The claim statement itself returns each
// delivery's secret row (its roll time and sealed forms); only a miss opens
// them. An entry is keyed by the endpoint AND its roll time: a roll, by
// this instance or another one sharing the database, gives the row a new
// rolled_at, so the next claim misses and opens the new secrets — no
// message between instances is needed. RollWebhookSecret also forgets the
// endpoint at once. The overlap's end is checked at each use, not cached.
type secretCache struct {
	mu sync.Mutex
	m  map[secretEndpoint]openedSecrets
}

// secretEndpoint is one endpoint of one merchant (endpoint one is the
// merchant's default URL and its webhook_secrets row).
type secretEndpoint struct {
	merchant int64
	endpoint int
}

// openedSecrets are an endpoint's secrets as opened at one roll.
type openedSecrets struct {
	rolledAt  time.Time
	prevUntil *time.Time
	cur, prev string
}

// secretCacheMax bounds the cache (16 endpoints of every merchant that
// receives callbacks fit many times over); beyond it, it starts afresh.
const secretCacheMax = 1 << 16

// get returns the endpoint's secrets when they were opened at rolledAt.
func (c *secretCache) get(k secretEndpoint, rolledAt time.Time) (openedSecrets, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, ok := c.m[k]
	if !ok || !o.rolledAt.Equal(rolledAt) {
		return openedSecrets{}, false
	}
	return o, true
}

// put keeps o as the endpoint's secrets, replacing those of an older roll.
func (c *secretCache) put(k secretEndpoint, o openedSecrets) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= secretCacheMax {
		c.m = make(map[secretEndpoint]openedSecrets)
	}
	c.m[k] = o
}

// forget drops the endpoint's secrets (after a roll).
func (c *secretCache) forget(k secretEndpoint) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, k)
}

// inForce are the secrets that sign at now, oldest first.
func (o openedSecrets) inForce(now time.Time) []string {
	if o.prev != "" && o.prevUntil != nil && now.Before(*o.prevUntil) {
		return []string{o.prev, o.cur}
	}
	return []string{o.cur}
}
