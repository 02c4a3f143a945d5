package main

// The gateway on a primary and a synchronous standby (internal/pgha), through
// a multi-host DATABASE_URL: it follows a promotion without a restart,
// answers what the failover interrupts with 503 and Retry-After, and a retry
// with the same Idempotency-Key has exactly one effect (docs/ha.md).

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/pgha"
	"github.com/paygate/gateway/internal/pgha/pghatest"
)

// haRequestTimeout is the client's limit on one request: the gateway's whole
// budget (60 s) and a margin. An answer that takes longer is a hang.
const haRequestTimeout = 65 * time.Second

// haRetryMax bounds how long a client keeps retrying an operation with its
// key after the promotion: far beyond the seconds a reconnection takes.
const haRetryMax = 2 * time.Minute

// shopAnswer is one HTTP exchange with /shop.
type shopAnswer struct {
	status     int
	retryAfter string
	code       float64
	data       map[string]any
	raw        string
	took       time.Duration
}

// haShop is a merchant's client of one gateway, with a transport of its own
// so that the test can measure each request.
type haShop struct {
	s      *server
	c      credentials
	client *http.Client
}

func (h *haShop) do(method, path, key string, body any) (shopAnswer, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return shopAnswer{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, h.s.url(path), rd)
	if err != nil {
		return shopAnswer{}, err
	}
	req.Header.Set("X-Shop-No", h.c.ShopNo)
	req.Header.Set("X-Public-Key", h.c.PublicKey)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	start := time.Now()
	resp, err := h.client.Do(req)
	if err != nil {
		return shopAnswer{took: time.Since(start)}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	a := shopAnswer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), raw: string(b), took: time.Since(start)}
	if err != nil {
		return a, err
	}
	var env struct {
		Code float64         `json:"code"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return a, fmt.Errorf("%s %s: %q is not an envelope", method, path, b)
	}
	a.code = env.Code
	_ = json.Unmarshal(env.Data, &a.data) // an object, or null, or a list
	return a, nil
}

// acceptable is the rule for every answer during a failover: a success, or
// 503 with Retry-After. Never a 500, never another error.
func (a shopAnswer) acceptable() error {
	switch {
	case a.status == http.StatusOK && a.code == 200:
		return nil
	case a.status == http.StatusServiceUnavailable && a.retryAfter != "":
		return nil
	}
	return fmt.Errorf("HTTP %d (Retry-After %q): %s", a.status, a.retryAfter, a.raw)
}

func (a shopAnswer) ok() bool { return a.status == http.StatusOK && a.code == 200 }

// haLedger is the test's record of the operations it sent, by key.
type haLedger struct {
	mu      sync.Mutex
	txIDs   map[string]string // key → txId of its success
	refused int               // 503 answers
	bad     []string          // answers that break the rule
}

func (l *haLedger) record(key string, a shopAnswer, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err != nil:
		l.bad = append(l.bad, fmt.Sprintf("%s: %v", key, err))
	case a.acceptable() != nil:
		l.bad = append(l.bad, fmt.Sprintf("%s: %v", key, a.acceptable()))
	case a.ok():
		txID, _ := a.data["txId"].(string)
		if prev, seen := l.txIDs[key]; seen && prev != txID {
			l.bad = append(l.bad, fmt.Sprintf("%s: txId %s, then %s", key, prev, txID))
		}
		l.txIDs[key] = txID
	default:
		l.refused++
	}
}

// haFixture is a gateway serving on a pair, with a merchant, a card and
// its clients.
type haFixture struct {
	t     *testing.T
	p     *pgha.Pair
	g     *gateway
	s     *server
	shop  *haShop
	card  string
	ops   *haLedger
	keyNo int
}

func newHAFixture(ctx context.Context, t *testing.T) *haFixture {
	t.Helper()
	return newHAFixtureOn(ctx, t, func(p *pgha.Pair) string { return p.URL("gateway") })
}

// newHAFixtureOn is newHAFixture with the gateway's DATABASE_URL made from
// the pair by dbURL (a proxy in front of a node).
func newHAFixtureOn(ctx context.Context, t *testing.T, dbURL func(*pgha.Pair) string) *haFixture {
	t.Helper()
	p := pghatest.StartPair(t)
	if err := p.CreateDatabase(ctx, "gateway"); err != nil {
		t.Fatal(err)
	}
	g := &gateway{t: t, env: map[string]string{
		"DATABASE_URL":             dbURL(p),
		"DATABASE_ALLOW_SUPERUSER": "1",
		"GATEWAY_SHUTDOWN_DRAIN":   "0s",
		"GATEWAY_DATA_DIR":         t.TempDir(),
		"GATEWAY_ADDR":             "127.0.0.1:0",
		"GATEWAY_INTERNAL_ADDR":    "127.0.0.1:0",
		"GATEWAY_CONSOLE_ADDR":     "127.0.0.1:0",
		"GATEWAY_LOG_LEVEL":        "error",
		// The load and its replays by key are the test's, all from one
		// merchant: a 429 would stand for an answer it must check.
		"GATEWAY_RATE_LIMIT_RPS": "off",
	}}
	c := g.createMerchant("HA Shop", "USD")
	g.deposit(c.ShopNo, "USD", "100000.00")
	s := g.serve("--plain-http")
	f := &haFixture{t: t, p: p, g: g, s: s, ops: &haLedger{txIDs: map[string]string{}},
		shop: &haShop{s: s, c: c, client: &http.Client{Timeout: haRequestTimeout, Transport: &http.Transport{}}}}
	t.Cleanup(f.shop.client.CloseIdleConnections)

	bins, err := f.shop.do(http.MethodGet, "/shop/card/bin/list", "", nil)
	if err != nil || !bins.ok() {
		t.Fatalf("GET /shop/card/bin/list: %v %s", err, bins.raw)
	}
	var list struct {
		Data []struct{ Bin, Currency string } `json:"data"`
	}
	_ = json.Unmarshal([]byte(bins.raw), &list)
	bin := ""
	for _, b := range list.Data {
		if b.Currency == "USD" {
			bin = b.Bin
			break
		}
	}
	if bin == "" {
		t.Fatalf("no USD BIN in %s", bins.raw)
	}
	card, err := f.shop.do(http.MethodPost, "/shop/card/create", "card-1", map[string]any{"bin": bin, "currency": "USD", "amount": 0})
	if err != nil || !card.ok() {
		t.Fatalf("POST /shop/card/create: %v %s", err, card.raw)
	}
	f.card, _ = card.data["cardNo"].(string)
	return f
}

// transfer moves 1.00 USD onto the card under key, once, and records the
// answer.
func (f *haFixture) transfer(key string) (shopAnswer, error) {
	a, err := f.shop.do(http.MethodPost, "/shop/card/transfer", key,
		map[string]any{"cardNo": f.card, "amount": 1, "currency": "USD", "direction": "IN"})
	f.ops.record(key, a, err)
	return a, err
}

func (f *haFixture) newKey(prefix string) string {
	f.keyNo++
	return fmt.Sprintf("%s-%d", prefix, f.keyNo)
}

// retryUntilOK sends key again, as a client told 503 does, until it
// succeeds.
func (f *haFixture) retryUntilOK(key string) {
	f.t.Helper()
	deadline := time.Now().Add(haRetryMax)
	for {
		a, err := f.transfer(key)
		if err == nil && a.ok() {
			return
		}
		if err != nil || a.acceptable() != nil || time.Now().After(deadline) {
			f.t.Fatalf("retrying %s: %v %+v", key, err, a)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkExactlyOnce checks that every key the test sent took effect exactly
// once: a replay of each returns its first txId, the card holds one dollar
// per key, the journal has one transfer per key, and audit verify passes.
func (f *haFixture) checkExactlyOnce(ctx context.Context) {
	f.t.Helper()
	f.ops.mu.Lock()
	keys := make(map[string]string, len(f.ops.txIDs))
	for k, v := range f.ops.txIDs {
		keys[k] = v
	}
	bad := append([]string(nil), f.ops.bad...)
	f.ops.mu.Unlock()
	for _, b := range bad {
		f.t.Errorf("an answer during the failover broke the rule (200, or 503 with Retry-After): %s", b)
	}
	for k, txID := range keys {
		a, err := f.shop.do(http.MethodPost, "/shop/card/transfer", k,
			map[string]any{"cardNo": f.card, "amount": 1, "currency": "USD", "direction": "IN"})
		if err != nil || !a.ok() || a.data["txId"] != txID {
			f.t.Errorf("replaying %s: %v %s, want txId %s", k, err, a.raw, txID)
		}
	}
	bal, err := f.shop.do(http.MethodGet, "/shop/card/balance?cardNo="+f.card, "", nil)
	if err != nil || !bal.ok() {
		f.t.Fatalf("card balance: %v %s", err, bal.raw)
	}
	if got, want := bal.data["balance"], float64(len(keys)); got != want {
		f.t.Errorf("card balance %v after %d acknowledged transfers of 1.00: an operation was lost or applied twice", got, len(keys))
	}
	db, err := sql.Open("pgx", f.p.Primary().URL("gateway"))
	if err != nil {
		f.t.Fatal(err)
	}
	defer db.Close()
	var entries, distinct int
	if err := db.QueryRowContext(ctx, `select count(*), count(distinct tx_id) from entries where kind = 'CARD_TRANSFER_IN'`).Scan(&entries, &distinct); err != nil {
		f.t.Fatalf("counting transfers on the new primary: %v", err)
	}
	if entries != len(keys) || distinct != len(keys) {
		f.t.Errorf("the journal has %d transfers (%d distinct), want exactly the %d acknowledged", entries, distinct, len(keys))
	}
	f.g.auditOK()
}

// The gateway follows a promotion through the multi-host DATABASE_URL: the
// primary is killed (SIGKILL of every process, as when its machine dies)
// while a transfer waits inside a batch transaction and clients keep
// sending; every answer is a success or 503 with Retry-After, none a 500 or
// a hang; the standby is promoted, the same gateway process writes to it
// without a restart, and every operation retried with its key takes effect
// exactly once. The old primary then rejoins as the synchronous standby.
func TestServeFollowsAPromotion(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	f := newHAFixture(ctx, t)

	for i := 0; i < 5; i++ {
		if a, err := f.transfer(f.newKey("before")); err != nil || !a.ok() {
			t.Fatalf("a transfer before the failover: %v %s", err, a.raw)
		}
	}

	// A transfer in flight at the crash: its batch waits on the merchant's
	// journal head, which another session holds on the primary.
	lock, err := sql.Open("pgx", f.p.Primary().URL("gateway"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	holder, err := lock.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.ExecContext(ctx, `select 1 from ledger_heads h join merchants m on m.id = h.merchant_id
		where m.shop_no = $1 for update of h`, f.shop.c.ShopNo); err != nil {
		t.Fatal(err)
	}
	inFlightKey := f.newKey("in-flight")
	inFlight := make(chan shopAnswer, 1)
	go func() {
		a, _ := f.transfer(inFlightKey)
		inFlight <- a
	}()
	if err := pollTrue(ctx, lock, `select exists (select 1 from pg_stat_activity
		where application_name = 'gateway' and wait_event_type = 'Lock')`); err != nil {
		t.Fatalf("the in-flight transfer never waited on the head lock: %v", err)
	}

	// Clients keep sending during the failover, each retrying its
	// operation with its key until it succeeds.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("load-%d-%d", w, n)
				for deadline := time.Now().Add(haRetryMax); time.Now().Before(deadline); {
					a, err := f.transfer(key)
					if err != nil || a.ok() || a.acceptable() != nil {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		}(w)
	}

	crashed := time.Now()
	f.p.Primary().Crash()
	select {
	case a := <-inFlight:
		if a.status != http.StatusServiceUnavailable || a.retryAfter == "" {
			t.Errorf("the transfer in flight at the crash: HTTP %d, Retry-After %q: %s; want 503 with Retry-After", a.status, a.retryAfter, a.raw)
		}
	case <-time.After(haRequestTimeout):
		t.Fatal("the transfer in flight at the crash was not answered within the request budget")
	}
	// With no primary at all, a new operation is refused at once.
	downKey := f.newKey("down")
	if a, err := f.transfer(downKey); err != nil || a.status != http.StatusServiceUnavailable || a.retryAfter == "" {
		t.Errorf("a transfer with no primary: %v HTTP %d %q %s; want 503 with Retry-After", err, a.status, a.retryAfter, a.raw)
	}

	promoteStart := time.Now()
	if err := f.p.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	promoted := time.Now()
	firstKey := f.newKey("after")
	f.retryUntilOK(firstKey)
	firstWrite := time.Now()
	f.retryUntilOK(inFlightKey)
	f.retryUntilOK(downKey)
	for i := 0; i < 5; i++ {
		if a, err := f.transfer(f.newKey("after")); err != nil || !a.ok() {
			t.Errorf("a transfer after the promotion: %v %s", err, a.raw)
		}
	}
	close(stop)
	wg.Wait()
	f.checkExactlyOnce(ctx)

	// The old primary comes back as the new primary's synchronous standby
	// (pg_rewind), and the gateway keeps writing.
	rejoinStart := time.Now()
	how, err := f.p.Rejoin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rejoined := time.Now()
	f.retryUntilOK(f.newKey("rejoined"))
	f.checkExactlyOnce(ctx)
	f.ops.mu.Lock()
	t.Logf("failover: promote took %s; first successful write %s after the kill (%s after the promotion); "+
		"rejoin (%s, catch-up, synchronous again) %s; %d operations acknowledged, %d answers 503",
		promoted.Sub(promoteStart).Round(time.Millisecond), firstWrite.Sub(crashed).Round(time.Millisecond),
		firstWrite.Sub(promoted).Round(time.Millisecond), how, rejoined.Sub(rejoinStart).Round(time.Millisecond),
		len(f.ops.txIDs), f.ops.refused)
	f.ops.mu.Unlock()
}

// pollTrue polls a query returning one boolean until it is true.
func pollTrue(ctx context.Context, db *sql.DB, query string, args ...any) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		var ok bool
		err := db.QueryRowContext(ctx, query, args...).Scan(&ok)
		if err == nil && ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error %v)", ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// A primary that turns read-only under the gateway's pooled connections (as
// a primary being demoted does; here default_transaction_read_only) makes
// their writes fail with SQLSTATE 25006: each such answer is 503 with
// Retry-After, not a 500, and the connection is dropped, so that once the
// standby is promoted the gateway's next connections find it (the
// multi-host URL skips the read-only node) instead of reusing pooled
// connections to the old one.
func TestServeLeavesADemotedPrimary(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	f := newHAFixture(ctx, t)
	for i := 0; i < 5; i++ {
		if a, err := f.transfer(f.newKey("before")); err != nil || !a.ok() {
			t.Fatalf("a transfer before the demotion: %v %s", err, a.raw)
		}
	}
	f.waitReady(true)
	if err := f.p.Fence(ctx); err != nil {
		t.Fatal(err)
	}
	// Readiness fails while the only primary is read-only.
	f.waitReady(false)
	fencedKey := f.newKey("fenced")
	if a, err := f.transfer(fencedKey); err != nil || a.status != http.StatusServiceUnavailable || a.retryAfter == "" {
		t.Errorf("a transfer on the read-only primary: %v HTTP %d %q %s; want 503 with Retry-After", err, a.status, a.retryAfter, a.raw)
	}
	if err := f.p.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	f.retryUntilOK(fencedKey)
	f.waitReady(true)
	for i := 0; i < 5; i++ {
		f.retryUntilOK(f.newKey("after"))
	}
	f.checkExactlyOnce(ctx)
	if _, err := f.p.Rejoin(ctx); err != nil {
		t.Fatal(err)
	}
	f.retryUntilOK(f.newKey("rejoined"))
	f.checkExactlyOnce(ctx)
}
