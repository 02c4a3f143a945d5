package ledger

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/postings"
)

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
// wrong key. Arguments: the dummy key hash, the shop number.
const authQuery = `select coalesce(m.id, 0) as id, q.shop_no, coalesce(m.name, 'no such shop') as name,
	coalesce(m.currencies, '{USD}') as currencies, coalesce(m.status, 'DISABLED') as status,
	coalesce(m.ip_whitelist, '{}') as ip_whitelist, coalesce(m.callback_url, '') as callback_url,
	coalesce(m.kyb_tier, 'TIER_1') as kyb_tier, coalesce(m.created_at, 'epoch') as created_at,
	m.last_authenticated_at, coalesce(m.public_key_sha256, ?) as public_key_sha256, m.id is not null as found
	from (select ?::text as shop_no) q left join merchants m on m.shop_no = q.shop_no`

// Steps of authenticate, reported to Ledger.authTrace (tests only).
const (
	authStepCacheCompare = "cache_compare"
	authStepQuery        = "query"
	authStepCompare      = "compare"
	authStepDecode       = "decode"
)

// authenticate resolves a shop number and public key to the merchant. A
// failure is one EUNAUTHENTICATED whatever failed, and every failure takes
// the same steps: the cache is probed and compared in constant time (to a
// dummy when the shop has no entry), then authQuery's one row is compared in
// constant time and decoded; only then is the outcome chosen.
func (l *Ledger) authenticate(ctx context.Context, shopNo, publicKey string) (*Merchant, error) {
	given := sha256.Sum256([]byte(publicKey))
	l.traceAuth(authStepCacheCompare)
	if m, ok := l.auth.get(shopNo, given, l.now()); ok {
		return m, nil
	}
	var r struct {
		merchantRow
		KeyHash []byte `bun:"public_key_sha256"`
		Found   bool   `bun:"found"`
	}
	l.traceAuth(authStepQuery)
	if err := l.db.NewRaw(authQuery, dummyKeyHash[:], shopNo).Scan(ctx, &r); err != nil {
		return nil, MapError(err) // not sql.ErrNoRows: the query always has a row
	}
	l.traceAuth(authStepCompare)
	match := subtle.ConstantTimeCompare(given[:], r.KeyHash) == 1
	l.traceAuth(authStepDecode)
	m := r.merchantRow.toMerchant()
	if !match || !r.Found {
		return nil, postings.Errorf(postings.EUNAUTHENTICATED, "unknown shop number or wrong public key")
	}
	l.auth.put(shopNo, given, &m, l.now())
	c := m
	return &c, nil
}

// traceAuth reports a step of authenticate to the test hook, if any.
func (l *Ledger) traceAuth(step string) {
	if l.authTrace != nil {
		l.authTrace(step)
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

func (l *Ledger) touchAuthenticated(_ context.Context, merchant int64, at time.Time) error {
	at = at.UTC().Truncate(time.Second)
	if !l.auth.shouldTouch(merchant, at) {
		return nil
	}
	l.touches.add(merchant, at, l.flushTouches)
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
func (l *Ledger) flushTouches() {
	p := l.touches.take()
	if len(p) == 0 {
		return
	}
	ids := make([]int64, 0, len(p))
	ats := make([]time.Time, 0, len(p))
	for id, at := range p {
		ids, ats = append(ids, id), append(ats, at)
	}
	ctx, cancel := context.WithTimeout(l.bg(), flushTouchesTimeout)
	defer cancel()
	_, err := l.db.NewRaw(`
		update merchants m set last_authenticated_at = v.at
		from unnest(?::bigint[], ?::timestamptz[]) as v(id, at)
		where m.id = v.id and (m.last_authenticated_at is null or m.last_authenticated_at < v.at)`,
		pgdialect.Array(ids), pgdialect.Array(ats)).Exec(ctx)
	if err != nil {
		l.log.Warn("recording authentication times", "merchants", len(ids), "error", err)
	}
}

// stmtReadCards reads a merchant's cards with their available and held
// balances and what they owe (the receivable's balance, zero or negative).
// Prepared, and written so that its one plan is index probes: the cards by
// primary key, each balance through the card's account (a lateral subquery
// kept apart by "offset 0").
var stmtReadCards = NewStmt(`
	select ` + cardColumnsOf("c") + `,
	       coalesce((select b.balance from accounts a join balances b on b.account_id = a.id
	                 where a.card_no = c.card_no and a.type = 'card_available' offset 0), 0),
	       coalesce((select b.balance from accounts a join balances b on b.account_id = a.id
	                 where a.card_no = c.card_no and a.type = 'card_held' offset 0), 0),
	       coalesce((select b.balance from accounts a join balances b on b.account_id = a.id
	                 where a.card_no = c.card_no and a.type = 'card_receivable' offset 0), 0)
	from cards c
	where c.merchant_id = $1 and c.card_no = any($2::text[])`)

func (l *Ledger) card(ctx context.Context, merchant int64, cardNo string) (*Card, error) {
	cards, err := l.cards(ctx, merchant, []string{cardNo})
	if err != nil {
		return nil, err
	}
	c := cards[cardNo]
	if c == nil {
		return nil, errCardNotFound()
	}
	return c, nil
}

func (l *Ledger) cards(ctx context.Context, merchant int64, cardNos []string) (map[string]*Card, error) {
	if len(cardNos) > CardsMax {
		return nil, postings.FieldErrorf("cardNos", "at most %d cards per call", CardsMax)
	}
	out := make(map[string]*Card, len(cardNos))
	err := l.Query(ctx, stmtReadCards, func(rows pgx.Rows) error {
		for rows.Next() {
			var r cardRow
			var available, held, receivable int64
			if err := r.scan(rows, &available, &held, &receivable); err != nil {
				return err
			}
			out[r.CardNo] = cardFromRow(&r, available, held)
			out[r.CardNo].Receivable = -receivable
		}
		return nil
	}, merchant, cardNos)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (l *Ledger) profile(ctx context.Context, merchant int64) (*Profile, error) {
	m, err := l.MerchantByID(ctx, merchant)
	if err != nil {
		return nil, err
	}
	p := &Profile{Merchant: *m, KYBTier: m.KYBTier, LastAuthenticatedAt: m.LastAuthenticatedAt}
	if at, ok := l.touches.latest(merchant); ok && (p.LastAuthenticatedAt == nil || at.After(*p.LastAuthenticatedAt)) {
		p.LastAuthenticatedAt = &at // this process's, not written yet
	}
	bals, err := l.Balances(ctx, merchant, postings.AccountFunding)
	if err != nil {
		return nil, err
	}
	byCur := map[string]int64{}
	for _, b := range bals {
		byCur[b.Account.Currency] = b.Balance
	}
	day := l.now().Format("2006-01-02")
	for _, cur := range m.Currencies {
		p.Balances = append(p.Balances, FundingBalance{Currency: cur, Balance: byCur[cur]})
		lim, err := limitFor(ctx, l.db, m, cur)
		if err != nil {
			return nil, err
		}
		var issued int64
		err = l.db.NewRaw(`select issued from card_issue_daily where merchant_id = ? and currency = ? and day = ?::date`,
			merchant, cur, day).Scan(ctx, &issued)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, MapError(err)
		}
		lim.DailyCardIssued = issued
		p.Limits = append(p.Limits, *lim)
	}
	if p.Receivables, err = l.receivables(ctx, merchant, m.Currencies); err != nil {
		return nil, err
	}
	return p, nil
}

// receivables returns what the merchant's cards owe, one entry per currency
// of currencies (zero included), then any other currency in which a card
// owes something. Each card_receivable account is reached through
// accounts_card_receivable_idx (0008): only cards that once owed have one.
func (l *Ledger) receivables(ctx context.Context, merchant int64, currencies []string) ([]Receivable, error) {
	var rows []struct {
		Currency string `bun:"currency"`
		Owed     int64  `bun:"owed"`
	}
	err := l.db.NewRaw(`
		select a.currency, least(-sum(b.balance), 1000000000000000000)::bigint as owed
		from accounts a
		cross join lateral (select b.balance from balances b where b.account_id = a.id offset 0) b
		where a.merchant_id = ? and a.type = 'card_receivable'
		group by a.currency
		order by a.currency`, merchant).Scan(ctx, &rows)
	if err != nil {
		return nil, MapError(err)
	}
	owed := make(map[string]int64, len(rows))
	for _, r := range rows {
		owed[r.Currency] = r.Owed
	}
	out := make([]Receivable, 0, len(currencies))
	for _, cur := range currencies {
		out = append(out, Receivable{Currency: cur, Amount: owed[cur]})
		delete(owed, cur)
	}
	for _, r := range rows {
		if _, other := owed[r.Currency]; other && r.Owed != 0 {
			out = append(out, Receivable{Currency: r.Currency, Amount: r.Owed})
		}
	}
	return out, nil
}

// binOpen says whether merchant m may use BIN entry b: enabled, and either
// opened to it explicitly (its merchant_bins row mb) or, with no override,
// in one of its currencies.
const binOpen = `b.enabled and coalesce(mb.allowed, b.currency = any(m.currencies))`

// binAccessSelect lists BIN entries with whether merchant ? may use them.
const binAccessSelect = `
	select b.bin, b.currency, b.network, b.type, b.enabled, ` + binOpen + ` as open
	from bins b
	join merchants m on m.id = ?
	left join merchant_bins mb on mb.merchant_id = m.id and mb.bin = b.bin and mb.currency = b.currency`

type binAccessRow struct {
	Bin      string `bun:"bin"`
	Currency string `bun:"currency"`
	Network  string `bun:"network"`
	Type     string `bun:"type"`
	Enabled  bool   `bun:"enabled"`
	Open     bool   `bun:"open"`
}

func (r *binAccessRow) toBIN() BIN {
	return BIN{Bin: r.Bin, Currency: r.Currency, Network: r.Network, Type: r.Type, Enabled: r.Enabled}
}

func (l *Ledger) merchantBINs(ctx context.Context, merchant int64) ([]BIN, error) {
	var rows []binAccessRow
	err := l.db.NewRaw(`select * from (`+binAccessSelect+`) x where x.open order by x.network, x.bin, x.currency`, merchant).
		Scan(ctx, &rows)
	if err != nil {
		return nil, MapError(err)
	}
	out := make([]BIN, len(rows))
	for i := range rows {
		out[i] = rows[i].toBIN()
	}
	return out, nil
}

// stmtLoadBins reads the access of merchants to BIN entries, for binFor.
// Each row is a primary-key probe whatever the statistics (see
// stmtLoadAccounts).
var stmtLoadBins = NewStmt(`
	select v.m, b.bin, b.currency, b.network, b.type, b.enabled, ` + binOpen + ` as open
	from unnest($1::bigint[], $2::text[], $3::text[]) as v(m, bin, cur)
	cross join lateral (select * from bins b where b.bin = v.bin and b.currency = v.cur offset 0) b
	cross join lateral (select * from merchants m where m.id = v.m offset 0) m
	left join lateral (select * from merchant_bins mb
	                   where mb.merchant_id = v.m and mb.bin = v.bin and mb.currency = v.cur offset 0) mb on true`)

// stmtLoadIssued reads issuing counters, for issuedToday: one correlated
// primary-key probe per merchant and currency.
var stmtLoadIssued = NewStmt(`
	select v.m, v.cur,
	       coalesce((select d.issued from card_issue_daily d
	                 where d.merchant_id = v.m and d.currency = v.cur and d.day = $3::date), 0)
	from unnest($1::bigint[], $2::text[]) as v(m, cur)`)

// queueBins queues, for card creations, the reads binFor and issuedToday
// would otherwise make one round trip each: the BIN entries' access and
// the merchants' issuing counters of today.
func (st *Tx) queueBins(p *Pipeline, keys []binKey) {
	day := st.day()
	issues := make([]issueKey, len(keys))
	for i, k := range keys {
		issues[i] = issueKey{k.merchant, k.currency, day}
	}
	st.queueBinAccess(p, keys)
	st.queueIssued(p, issues)
}

// queueBinAccess queues the read of BIN entries' access that the batch
// does not know yet. An entry the read does not return is recorded as
// absent (nil): binFor refuses it.
func (st *Tx) queueBinAccess(p *Pipeline, keys []binKey) {
	e := &st.ext
	if e.bins == nil {
		e.bins = map[binKey]*binAccessRow{}
	}
	var want []binKey
	var ms []int64
	var bins, curs []string
	for _, k := range keys {
		if _, ok := e.bins[k]; !ok && !slices.Contains(want, k) {
			want = append(want, k)
			ms, bins, curs = append(ms, k.merchant), append(bins, k.bin), append(curs, k.currency)
		}
	}
	if len(want) == 0 {
		return
	}
	p.Query(stmtLoadBins, func(rows pgx.Rows) error {
		for rows.Next() {
			var m int64
			var r binAccessRow
			if err := rows.Scan(&m, &r.Bin, &r.Currency, &r.Network, &r.Type, &r.Enabled, &r.Open); err != nil {
				return err
			}
			e.bins[binKey{merchant: m, bin: r.Bin, currency: r.Currency}] = &r
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for _, k := range want {
			if _, ok := e.bins[k]; !ok {
				e.bins[k] = nil
			}
		}
		return nil
	}, ms, bins, curs)
}

// queueIssued queues the read of issuing counters that the batch does not
// know yet (all of one day, st.day()); a missing row is zero.
func (st *Tx) queueIssued(p *Pipeline, keys []issueKey) {
	e := &st.ext
	e.init()
	var want []issueKey
	var ms []int64
	var curs []string
	for _, k := range keys {
		if _, ok := e.issued[k]; !ok && !slices.Contains(want, k) {
			want = append(want, k)
			ms, curs = append(ms, k.merchant), append(curs, k.currency)
		}
	}
	if len(want) == 0 {
		return
	}
	day := st.day()
	p.Query(stmtLoadIssued, func(rows pgx.Rows) error {
		for rows.Next() {
			var m, issued int64
			var cur string
			if err := rows.Scan(&m, &cur, &issued); err != nil {
				return err
			}
			e.issued[issueKey{m, cur, day}] = &issueState{issued: issued}
		}
		return rows.Err()
	}, ms, curs, day)
}

// binFor returns the BIN entry (bin, currency) if it is open to m, else
// EFORBIDDEN "bin".
func (st *Tx) binFor(m *Merchant, bin, currency string) (*BIN, error) {
	k := binKey{merchant: m.ID, bin: bin, currency: currency}
	if _, ok := st.ext.bins[k]; !ok {
		p := st.Pipeline()
		st.queueBinAccess(p, []binKey{k})
		if err := p.Send(); err != nil {
			return nil, err
		}
	}
	row := st.ext.bins[k]
	if row == nil || !row.Open {
		return nil, postings.ReasonErrorf(postings.EFORBIDDEN, postings.ReasonBIN, "BIN %s in %s is not open to this merchant", bin, currency)
	}
	b := row.toBIN()
	return &b, nil
}

// limit returns m's limits in currency, as seen by this batch.
func (st *Tx) limit(m *Merchant, currency string) (*Limit, error) {
	k := strconv.FormatInt(m.ID, 10) + ":" + currency
	if lim, ok := st.ext.limits[k]; ok {
		c := *lim
		return &c, nil
	}
	var lim *Limit
	var err error
	if st.ext.limitsRead[m.ID] {
		// Read with the head lock; absent rows mean the tier's defaults.
		lim, err = limitFrom(st.ctx, st.idb, m, currency, st.ext.limitRows[k])
	} else {
		lim, err = limitFor(st.ctx, st.idb, m, currency)
	}
	if err != nil {
		return nil, err
	}
	if st.ext.limits == nil {
		st.ext.limits = map[string]*Limit{}
	}
	st.ext.limits[k] = lim
	c := *lim
	return &c, nil
}

// Default limits of each KYB tier, in USD minor units: the largest card
// balance and the card funding per UTC day. Other currencies get the same
// value converted at the current USD rate (docs/cards.md).
var tierLimitsUSD = map[string]struct{ cardBalanceMax, dailyCardIssueMax, remittanceMax int64 }{
	KYBTier1: {10_000_00, 50_000_00, 5_000_00},
	KYBTier2: {100_000_00, 500_000_00, 50_000_00},
	KYBTier3: {1_000_000_00, 10_000_000_00, 1_000_000_00},
}

func limitFor(ctx context.Context, db bun.IDB, m *Merchant, currency string) (*Limit, error) {
	var row limitRow
	err := db.NewRaw(`select card_balance_max, daily_card_issue_max, remittance_max from merchant_limits where merchant_id = ? and currency = ?`,
		m.ID, currency).Scan(ctx, &row.cardBalanceMax, &row.dailyCardIssueMax, &row.remittanceMax)
	if errors.Is(err, sql.ErrNoRows) {
		return limitFrom(ctx, db, m, currency, nil)
	}
	if err != nil {
		return nil, MapError(err)
	}
	return limitFrom(ctx, db, m, currency, &row)
}

// limitRow is a merchant_limits row.
type limitRow struct {
	cardBalanceMax, dailyCardIssueMax int64
	remittanceMax                     *int64 // NULL: the tier's
}

// limitFrom is m's limit in currency from its merchant_limits row, or the
// tier's defaults when it has none.
func limitFrom(ctx context.Context, db bun.IDB, m *Merchant, currency string, row *limitRow) (*Limit, error) {
	def, err := tierLimit(ctx, db, m.KYBTier, currency)
	if err != nil || row == nil {
		return def, err
	}
	lim := &Limit{Currency: currency, CardBalanceMax: row.cardBalanceMax, DailyCardIssueMax: row.dailyCardIssueMax,
		RemittanceMax: def.RemittanceMax}
	if row.remittanceMax != nil {
		lim.RemittanceMax = *row.remittanceMax
	}
	return lim, nil
}

var stmtLoadLimits = NewStmt(`
	select l.merchant_id, l.currency, l.card_balance_max, l.daily_card_issue_max, l.remittance_max
	from unnest($1::bigint[]) as v(m)
	cross join lateral (select * from merchant_limits l where l.merchant_id = v.m offset 0) l`)

// queueLimits queues the read of the merchants' limits in every currency,
// with the head lock: most commands check one.
func (st *Tx) queueLimits(p *Pipeline, merchants []int64) {
	if st.ext.limitsRead == nil {
		st.ext.limitsRead, st.ext.limitRows = map[int64]bool{}, map[string]*limitRow{}
	}
	p.Query(stmtLoadLimits, func(rows pgx.Rows) error {
		for rows.Next() {
			var m int64
			var cur string
			r := &limitRow{}
			if err := rows.Scan(&m, &cur, &r.cardBalanceMax, &r.dailyCardIssueMax, &r.remittanceMax); err != nil {
				return err
			}
			st.ext.limitRows[strconv.FormatInt(m, 10)+":"+cur] = r
		}
		for _, m := range merchants {
			st.ext.limitsRead[m] = true
		}
		return nil
	}, merchants)
}

// tierLimit converts a tier's USD limits into currency.
func tierLimit(ctx context.Context, db bun.IDB, tier, currency string) (*Limit, error) {
	t, ok := tierLimitsUSD[tier]
	if !ok {
		return nil, postings.FieldErrorf("tier", "must be one of TIER_1, TIER_2, TIER_3")
	}
	lim := &Limit{Currency: currency, CardBalanceMax: t.cardBalanceMax, DailyCardIssueMax: t.dailyCardIssueMax, RemittanceMax: t.remittanceMax}
	if currency == "USD" {
		return lim, nil
	}
	to, err := postings.LookupCurrency(currency)
	if err != nil {
		return nil, err
	}
	// A limit is what the merchant may move: converted, it rounds down
	// (usdFigure).
	for _, v := range []*int64{&lim.CardBalanceMax, &lim.DailyCardIssueMax, &lim.RemittanceMax} {
		if *v, err = usdFigure(ctx, db, *v, to); err != nil {
			return nil, err
		}
	}
	return lim, nil
}

// resetLimits writes the tier's limits for each currency.
func resetLimits(ctx context.Context, db bun.IDB, merchant int64, tier string, currencies []string) error {
	for _, cur := range currencies {
		lim, err := tierLimit(ctx, db, tier, cur)
		if err != nil {
			return err
		}
		_, err = db.NewRaw(`
			insert into merchant_limits (merchant_id, currency, card_balance_max, daily_card_issue_max)
			values (?, ?, ?, ?)
			on conflict (merchant_id, currency) do update
			set card_balance_max = excluded.card_balance_max, daily_card_issue_max = excluded.daily_card_issue_max,
			    remittance_max = null`,
			merchant, cur, lim.CardBalanceMax, lim.DailyCardIssueMax).Exec(ctx)
		if err != nil {
			return MapError(err)
		}
	}
	return nil
}

// fxRateRow is a rate as read, with its parsed mid rate.
type fxRateRow struct {
	FXRate
	mid postings.Rate
}

func readFXRate(ctx context.Context, db bun.IDB, base, quote string) (*fxRateRow, error) {
	var r fxRateRow
	err := db.NewRaw(`select base, quote, mid_rate::text, spread_bps, source, updated_at from fx_rates where base = ? and quote = ?`,
		base, quote).Scan(ctx, &r.Base, &r.Quote, &r.MidRate, &r.SpreadBps, &r.Source, &r.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, postings.ReasonErrorf(postings.EFORBIDDEN, postings.ReasonFXPair, "no exchange rate from %s to %s", base, quote)
	}
	if err != nil {
		return nil, MapError(err)
	}
	if r.mid, err = postings.ParseRate(r.MidRate); err != nil {
		return nil, Invariantf("stored rate %s/%s: %v", base, quote, err)
	}
	r.MidRate = r.mid.String()
	r.UpdatedAt = r.UpdatedAt.UTC()
	return &r, nil
}

// fxRate returns the current rate from base to quote, refusing one older
// than the configured age.
func (st *Tx) fxRate(base, quote string) (*fxRateRow, error) {
	r, ok := st.ext.rates[base+"/"+quote]
	if !ok {
		var err error
		if r, err = readFXRate(st.ctx, st.idb, base, quote); err != nil {
			return nil, err
		}
		if st.ext.rates == nil {
			st.ext.rates = map[string]*fxRateRow{}
		}
		st.ext.rates[base+"/"+quote] = r
	}
	if age := st.now.Sub(r.UpdatedAt); age > st.l.cfg.FXRateMaxAge {
		return nil, postings.ReasonErrorf(postings.ESTATE, postings.ReasonFXRateStale,
			"the %s/%s rate is %s old, older than the %s allowed", base, quote, age.Round(time.Second), st.l.cfg.FXRateMaxAge)
	}
	return r, nil
}
