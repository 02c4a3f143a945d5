package merchant

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"sync"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Authentication of /shop requests (docs/security.md, control 1): a shop
// number and its public key resolve to the merchant, in constant time and
// with the same steps whatever fails, with a short cache of successes and
// the last authentication time recorded in the background.

// dummyKeyHash stands in for the stored key hash of a shop that does not
// exist (and for a cache entry that is not there), so that an unknown shop
// and a wrong key take the same steps (docs/security.md, control 1). No
// merchant can hold it: a shop that is not found is refused whatever the
// comparison says.
var dummyKeyHash = sha256.Sum256([]byte("gateway: no such shop"))

// authQuery returns exactly one row whether the shop exists or not: an
// unknown shop gets a stand-in row of the same columns (the key hash is
// dummyKeyHash) and found false. One round trip, one row scanned and
// decoded, one comparison: nothing in the work tells an unknown shop from a
// wrong key. The previous key of a roll (keyroll.go) comes with it,
// the dummy standing in when there is none, so that it too is compared every
// time. Arguments: the dummy key hash twice, the shop number.
const authQuery = `select coalesce(m.id, 0) as id, q.shop_no, coalesce(m.name, 'no such shop') as name,
	coalesce(m.currencies, '{USD}') as currencies, coalesce(m.status, 'DISABLED') as status,
	coalesce(m.ip_whitelist, '{}') as ip_whitelist, coalesce(m.callback_url, '') as callback_url,
	coalesce(m.kyb_tier, 'TIER_1') as kyb_tier, coalesce(m.created_at, 'epoch') as created_at,
	m.last_authenticated_at, coalesce(m.api_version, '') as api_version, coalesce(m.test, false) as test,
	coalesce(m.public_key_sha256, ?) as public_key_sha256,
	coalesce(m.public_key_prev_sha256, ?) as public_key_prev_sha256, m.public_key_prev_until, m.id is not null as found
	from (select ?::text as shop_no) q left join merchants m on m.shop_no = q.shop_no`

// Steps of authenticate, reported to Service.authTrace (tests only).
const (
	authStepCacheCompare = "cache_compare"
	authStepQuery        = "query"
	authStepCompare      = "compare"
	authStepDecode       = "decode"
)

// Authenticate resolves a shop number and public key to the merchant. A
// failure is one EUNAUTHENTICATED whatever failed, and every failure takes
// the same steps: the cache is probed and compared in constant time (to a
// dummy when the shop has no entry), then authQuery's one row is compared in
// constant time and decoded; only then is the outcome chosen.
//
// A disabled merchant is returned with the merchant (the caller decides:
// the API answers 403).
func (s *Service) Authenticate(ctx context.Context, shopNo, publicKey string) (*Merchant, error) {
	given := sha256.Sum256([]byte(publicKey))
	s.traceAuth(authStepCacheCompare)
	if m, ok := s.auth.get(shopNo, given, s.l.Now()); ok {
		return m, nil
	}
	var r struct {
		merchantRow
		KeyHash   []byte     `bun:"public_key_sha256"`
		PrevHash  []byte     `bun:"public_key_prev_sha256"`
		PrevUntil *time.Time `bun:"public_key_prev_until"`
		Found     bool       `bun:"found"`
	}
	s.traceAuth(authStepQuery)
	if err := s.l.DB().NewRaw(authQuery, dummyKeyHash[:], dummyKeyHash[:], shopNo).Scan(ctx, &r); err != nil {
		return nil, ledger.MapError(err) // not sql.ErrNoRows: the query always has a row
	}
	s.traceAuth(authStepCompare)
	// Both comparisons always run, each in constant time; the previous key
	// counts only during its overlap.
	current := subtle.ConstantTimeCompare(given[:], r.KeyHash) == 1
	previous := subtle.ConstantTimeCompare(given[:], r.PrevHash) == 1
	now := s.l.Now()
	previous = previous && r.PrevUntil != nil && now.Before(*r.PrevUntil)
	s.traceAuth(authStepDecode)
	m := r.merchantRow.toMerchant()
	m.ByPreviousKey = previous && !current
	if !(current || previous) || !r.Found {
		return nil, postings.Errorf(postings.EUNAUTHENTICATED, "unknown shop number or wrong public key")
	}
	// Only the current key is cached: a previous key is checked against the
	// database every time, so the end of its overlap (or an operator ending
	// it) applies at once, in every process.
	if current {
		s.auth.put(shopNo, given, &m, now)
	}
	c := m
	return &c, nil
}

// traceAuth reports a step of authenticate to the test hook, if any.
func (s *Service) traceAuth(step string) {
	if s.authTrace != nil {
		s.authTrace(step)
	}
}

// authCache keeps successful authentications for a short time, so that a
// busy merchant's requests do not each read its row. Only successes are
// kept, under the SHA-256 of the key that succeeded; the operator's changes
// in this process drop the merchant at once, and other processes see them
// within authCacheTTL (docs/security.md).
type authCache struct {
	mu      sync.Mutex
	entries map[string]authEntry
	touched map[int64]time.Time // last recorded authentication, per merchant
}

type authEntry struct {
	keyHash [32]byte
	m       Merchant
	at      time.Time
}

const (
	authCacheTTL        = time.Second
	authCacheEntriesMax = 100_000
)

func (a *authCache) get(shopNo string, keyHash [32]byte, now time.Time) (*Merchant, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.entries[shopNo]
	stored := dummyKeyHash
	if ok {
		stored = e.keyHash
	}
	// Compared even when there is no entry: a shop that was never cached
	// costs what a cached shop with the wrong key costs.
	match := subtle.ConstantTimeCompare(stored[:], keyHash[:]) == 1
	if !ok || !match || now.Sub(e.at) > authCacheTTL || now.Before(e.at) {
		return nil, false
	}
	m := e.m
	return &m, true
}

func (a *authCache) put(shopNo string, keyHash [32]byte, m *Merchant, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.entries == nil || len(a.entries) >= authCacheEntriesMax {
		a.entries = map[string]authEntry{} // bounded: start over rather than grow
	}
	a.entries[shopNo] = authEntry{keyHash: keyHash, m: *m, at: now}
}

// forget drops a merchant after an operator change.
func (a *authCache) forget(merchant int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, e := range a.entries {
		if e.m.ID == merchant {
			delete(a.entries, k)
		}
	}
}

// shouldTouch reports whether the authentication time of merchant needs a
// write: at most one a second per process (the statement itself keeps it to
// one a second across processes).
func (a *authCache) shouldTouch(merchant int64, at time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.touched == nil || len(a.touched) >= authCacheEntriesMax {
		a.touched = map[int64]time.Time{}
	}
	if last, ok := a.touched[merchant]; ok && !at.After(last) {
		return false
	}
	a.touched[merchant] = at
	return true
}

// TouchAuthenticated records a successful authentication at time at. It
// writes at most once per second per merchant, after a short delay
// (flushTouches).
func (s *Service) TouchAuthenticated(_ context.Context, merchant int64, at time.Time) error {
	at = at.UTC().Truncate(time.Second)
	if !s.auth.shouldTouch(merchant, at) {
		return nil
	}
	s.touches.add(merchant, at, s.flushTouches)
	return nil
}

// touchFlushDelay is how long authentication times wait to be written: one
// statement a second for every merchant, rather than one autocommit (and
// one WAL flush) a second per active merchant.
const touchFlushDelay = time.Second

// touches are the authentication times not yet written.
type touches struct {
	mu        sync.Mutex
	pending   map[int64]time.Time
	scheduled bool
}

// add records at for merchant and schedules flush if none is scheduled.
func (t *touches) add(merchant int64, at time.Time, flush func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending == nil {
		t.pending = map[int64]time.Time{}
	}
	if prev, ok := t.pending[merchant]; !ok || at.After(prev) {
		t.pending[merchant] = at
	}
	if !t.scheduled {
		t.scheduled = true
		time.AfterFunc(touchFlushDelay, flush)
	}
}

// latest is the pending time of merchant, if any.
func (t *touches) latest(merchant int64) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.pending[merchant]
	return at, ok
}

func (t *touches) take() map[int64]time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.pending
	t.pending, t.scheduled = nil, false
	return p
}

// flushTouchesTimeout bounds the write of the pending authentication times.
const flushTouchesTimeout = 10 * time.Second

// flushTouches writes the pending authentication times in one statement.
// They are a convenience for the profile: a failed write is logged, not
// retried (the next authentication writes a later time).
func (s *Service) flushTouches() {
	p := s.touches.take()
	if len(p) == 0 {
		return
	}
	ids := make([]int64, 0, len(p))
	ats := make([]time.Time, 0, len(p))
	for id, at := range p {
		ids, ats = append(ids, id), append(ats, at)
	}
	ctx, cancel := context.WithTimeout(context.Background(), flushTouchesTimeout)
	defer cancel()
	_, err := s.l.DB().NewRaw(`
		update merchants m set last_authenticated_at = v.at
		from unnest(?::bigint[], ?::timestamptz[]) as v(id, at)
		where m.id = v.id and (m.last_authenticated_at is null or m.last_authenticated_at < v.at)`,
		pgdialect.Array(ids), pgdialect.Array(ats)).Exec(ctx)
	if err != nil {
		s.l.Logger().Warn("recording authentication times", "merchants", len(ids), "error", err)
	}
}

// LastAuthenticatedAt is the last successful authentication of m: its
// stored time, or this process's later one not written yet.
func (s *Service) LastAuthenticatedAt(m *Merchant) *time.Time {
	last := m.LastAuthenticatedAt
	if at, ok := s.touches.latest(m.ID); ok && (last == nil || at.After(*last)) {
		last = &at
	}
	return last
}

// MerchantChanged drops what the service caches about a merchant after a
// change to its row (the operator's commands and the domains' settings).
func (s *Service) MerchantChanged(merchant int64) { s.auth.forget(merchant) }
