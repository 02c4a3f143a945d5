package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// merchant is a merchant the scenario created with the ledger library, with
// its credentials for /shop and the cards made at setup.
type merchant struct {
	id                    int64
	shopNo, pub, priv     string
	cur                   string
	bin                   string
	deposits              int64
	setupFunding          int64 // moved to cards at setup
	cards                 []*card
	fundingDelta          int64 // other effects on funding the scenario knows of (remittances)
	netCards              []*card
	expectedFundingReason string
}

type card struct {
	no      string
	m       *merchant
	initial int64
}

// setupMerchants creates n USD merchants, each with a large deposit, no
// limit in the way, and cardsEach cards funded with cardFunding.
func setupMerchants(ctx context.Context, l *services, n, cardsEach int, cardFunding int64, callbackURL string) ([]*merchant, error) {
	var out []*merchant
	for i := 0; i < n; i++ {
		m, creds, err := l.CreateMerchant(ctx, ledger.MerchantSpec{Name: fmt.Sprintf("Chaos shop %d", i+1),
			Currencies: []string{"USD"}, CallbackURL: callbackURL})
		if err != nil {
			return nil, fmt.Errorf("CreateMerchant: %w", err)
		}
		if err := l.cards.SetLimit(ctx, m.ID, "USD", 100_000_000_00, 1_000_000_000_000_00); err != nil {
			return nil, fmt.Errorf("SetLimit: %w", err)
		}
		mm := &merchant{id: m.ID, shopNo: creds.ShopNo, pub: creds.PublicKey, priv: creds.PrivateKey, cur: "USD"}
		bins, err := l.cards.MerchantBINs(ctx, m.ID)
		if err != nil {
			return nil, err
		}
		for _, b := range bins {
			if b.Currency == "USD" {
				mm.bin = b.Bin
				break
			}
		}
		if mm.bin == "" {
			return nil, fmt.Errorf("merchant %d has no USD BIN", m.ID)
		}
		mm.deposits = 5_000_000_00
		if _, err := l.Deposit(ctx, m.ID, "USD", mm.deposits, &ledger.Idempotency{Key: "chaos-setup-deposit"}); err != nil {
			return nil, fmt.Errorf("deposit: %w", err)
		}
		for j := 0; j < cardsEach; j++ {
			c, err := l.cards.CreateCard(ctx, m.ID, cards.CreateCardInput{Bin: mm.bin, Currency: "USD", Amount: cardFunding, Remark: "chaos setup"}, nil)
			if err != nil {
				return nil, fmt.Errorf("CreateCard: %w", err)
			}
			mm.cards = append(mm.cards, &card{no: c.CardNo, m: mm, initial: cardFunding})
			mm.setupFunding += cardFunding
		}
		out = append(out, mm)
	}
	return out, nil
}

// Kinds of shop operations.
const (
	kindIn       = "transfer IN"
	kindOut      = "transfer OUT"
	kindCreate   = "card create"
	kindFreeze   = "freeze"
	kindUnfreeze = "unfreeze"
)

// shopOp is one money operation over HTTP with its own Idempotency-Key,
// and everything the client learnt about it.
type shopOp struct {
	i      int
	kind   string
	m      *merchant
	card   *card
	amount int64
	key    string
	path   string
	body   []byte
	dup    bool // sent to two gateways at once

	mu          sync.Mutex
	attempts    int
	answered    bool
	answeredAt  time.Time
	firstSentAt time.Time
	status      int    // HTTP status of the final answer
	code        int    // envelope code of the final answer
	message     string // envelope message of the final answer
	txID        string
	cardNo      string
	dupMismatch string
	refused     string // a 4xx the client did not expect
}

func (o *shopOp) ok() bool { return o.answered && o.status == http.StatusOK && o.code == 200 }

// answerText is the comparable form of the final answer.
func (o *shopOp) answerText() string {
	return fmt.Sprintf("%d/%d/%s%s", o.status, o.code, o.txID, o.cardNo)
}

type planOptions struct {
	n             int
	createPercent int
	freezePercent int // freeze + unfreeze
	dupPercent    int
	callbackURL   string
	keyPrefix     string
}

// planShopOps draws the operations from the seed: transfers IN and OUT on
// the setup cards, card creates, and optionally freezes.
func planShopOps(rng *rand.Rand, ms []*merchant, p planOptions) []*shopOp {
	ops := make([]*shopOp, 0, p.n)
	for i := 0; i < p.n; i++ {
		m := ms[rng.IntN(len(ms))]
		o := &shopOp{i: i, m: m, key: fmt.Sprintf("%s-%d", p.keyPrefix, i)}
		r := rng.IntN(100)
		cur := postings.MustCurrency(m.cur)
		switch {
		case r < p.createPercent:
			o.kind, o.path = kindCreate, "/shop/card/create"
			o.amount = rng.Int64N(50_00)
			req := map[string]any{"bin": m.bin, "currency": m.cur, "amount": postings.FormatMinor(o.amount, cur), "remark": "chaos"}
			if p.callbackURL != "" {
				req["callback_url"] = p.callbackURL
			}
			o.body, _ = json.Marshal(req)
		case r < p.createPercent+p.freezePercent:
			o.card = m.cards[rng.IntN(len(m.cards))]
			o.kind, o.path = kindFreeze, "/shop/card/freeze"
			if rng.IntN(2) == 0 {
				o.kind, o.path = kindUnfreeze, "/shop/card/unfreeze"
			}
			o.body, _ = json.Marshal(map[string]any{"cardNo": o.card.no})
		default:
			o.card = m.cards[rng.IntN(len(m.cards))]
			o.kind = kindIn
			if rng.IntN(100) < 45 {
				o.kind = kindOut
			}
			o.path = "/shop/card/transfer"
			o.amount = 1 + rng.Int64N(20_00)
			if o.kind == kindOut && rng.IntN(100) < 5 {
				o.amount = 1_000_000_00 // more than any card holds: 1001, stored and replayed like a success
			}
			dir := "IN"
			if o.kind == kindOut {
				dir = "OUT"
			}
			o.body, _ = json.Marshal(map[string]any{"cardNo": o.card.no, "amount": postings.FormatMinor(o.amount, cur),
				"currency": m.cur, "direction": dir})
		}
		o.dup = rng.IntN(100) < p.dupPercent
		ops = append(ops, o)
	}
	return ops
}

// attempt is one HTTP exchange, as the observers see it.
type attempt struct {
	start, end time.Time
	target     int
	transport  error // no HTTP answer at all
	status     int
	envelope   bool // the body was the {code, message, data} envelope
	code       int
}

// runner sends operations with retries until each one is answered.
type runner struct {
	targets  []string // base URLs
	client   *http.Client
	observe  func(a attempt) // may be nil; called for every exchange
	answered atomic.Int64
	attempts atomic.Int64
	// counts of non-final answers
	transportErrors, status5xx, status500, status429, inProgress atomic.Int64
	giveUp                                                       time.Duration
}

func newRunner(targets []string, clients int) *runner {
	tr := &http.Transport{MaxIdleConnsPerHost: clients * 2, MaxConnsPerHost: 0, IdleConnTimeout: 30 * time.Second,
		DisableCompression: true}
	return &runner{targets: targets, client: &http.Client{Transport: tr, Timeout: 75 * time.Second}, giveUp: 5 * time.Minute}
}

// run sends ops from `clients` goroutines and returns when every one is
// answered (or given up after r.giveUp).
func (r *runner) run(ctx context.Context, rng *rand.Rand, ops []*shopOp, clients int) {
	ch := make(chan *shopOp)
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		seed := rng.Uint64()
		wg.Add(1)
		go func() {
			defer wg.Done()
			crng := rand.New(rand.NewPCG(seed, 7))
			for o := range ch {
				r.do(ctx, crng, o)
			}
		}()
	}
	for _, o := range ops {
		select {
		case ch <- o:
		case <-ctx.Done():
		}
	}
	close(ch)
	wg.Wait()
}

func (r *runner) do(ctx context.Context, rng *rand.Rand, o *shopOp) {
	if !o.dup || len(r.targets) < 2 {
		r.loop(ctx, rng, o, -1, o)
		r.answered.Add(1)
		return
	}
	// The same request to two gateways at once: one runs it, the other
	// waits (1009) or replays; both must end with the same answer.
	a, b := rng.IntN(len(r.targets)), 0
	b = (a + 1 + rng.IntN(len(r.targets)-1)) % len(r.targets)
	twin := &shopOp{i: o.i, kind: o.kind, m: o.m, card: o.card, amount: o.amount, key: o.key, path: o.path, body: o.body}
	var wg sync.WaitGroup
	wg.Add(1)
	seed := rng.Uint64()
	go func() {
		defer wg.Done()
		r.loop(ctx, rand.New(rand.NewPCG(seed, 9)), twin, b, twin)
	}()
	r.loop(ctx, rng, o, a, o)
	wg.Wait()
	o.mu.Lock()
	o.attempts += twin.attempts
	if twin.answerText() != o.answerText() {
		o.dupMismatch = fmt.Sprintf("gateway %d answered %s, gateway %d answered %s", a, o.answerText(), b, twin.answerText())
	}
	o.mu.Unlock()
	r.answered.Add(1)
}

// loop retries o with the same Idempotency-Key until it is answered: a
// success or a business failure. Unanswered requests (no connection, reset,
// 5xx, 429, 1009) are retried after a short back-off.
func (r *runner) loop(ctx context.Context, rng *rand.Rand, o *shopOp, target int, rec *shopOp) {
	deadline := time.Now().Add(r.giveUp)
	for n := 0; ; n++ {
		if ctx.Err() != nil || time.Now().After(deadline) {
			return
		}
		t := target
		if t < 0 {
			t = rng.IntN(len(r.targets))
		}
		rec.mu.Lock()
		rec.attempts++
		if rec.firstSentAt.IsZero() {
			rec.firstSentAt = time.Now()
		}
		rec.mu.Unlock()
		a, env := r.send(ctx, t, o)
		r.attempts.Add(1)
		if r.observe != nil {
			r.observe(a)
		}
		final := false
		switch {
		case a.transport != nil:
			r.transportErrors.Add(1)
		case a.status == http.StatusTooManyRequests:
			r.status429.Add(1)
		case a.status >= 500:
			r.status5xx.Add(1)
			if a.status == http.StatusInternalServerError {
				r.status500.Add(1)
			}
		case a.status == http.StatusOK && a.code == 1009:
			r.inProgress.Add(1)
		case a.status == http.StatusOK && a.envelope:
			final = true
		default:
			final = true
			rec.mu.Lock()
			rec.refused = fmt.Sprintf("HTTP %d code %d: %s", a.status, a.code, env.Message)
			rec.mu.Unlock()
		}
		if final {
			rec.mu.Lock()
			rec.answered, rec.answeredAt, rec.status, rec.code, rec.message = true, a.end, a.status, a.code, env.Message
			if a.code == 200 {
				var d struct {
					TxID   string `json:"txId"`
					CardNo string `json:"cardNo"`
				}
				_ = json.Unmarshal(env.Data, &d)
				rec.txID = d.TxID
				if o.kind == kindCreate {
					rec.cardNo = d.CardNo
				}
			}
			rec.mu.Unlock()
			return
		}
		back := time.Duration(20<<min(n, 4)) * time.Millisecond
		back += time.Duration(rng.Int64N(int64(back)))
		select {
		case <-time.After(back):
		case <-ctx.Done():
			return
		}
	}
}

type envelope struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (r *runner) send(ctx context.Context, target int, o *shopOp) (attempt, envelope) {
	a := attempt{start: time.Now(), target: target}
	var env envelope
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.targets[target]+o.path, bytes.NewReader(o.body))
	if err != nil {
		a.transport, a.end = err, time.Now()
		return a, env
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Shop-No", o.m.shopNo)
	req.Header.Set("X-Public-Key", o.m.pub)
	req.Header.Set("Idempotency-Key", o.key)
	resp, err := r.client.Do(req)
	if err != nil {
		a.transport, a.end = err, time.Now()
		return a, env
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	a.end = time.Now()
	a.status = resp.StatusCode
	if err != nil {
		a.transport = err
		return a, env
	}
	var raw map[string]json.RawMessage
	if json.Unmarshal(body, &raw) == nil && raw["code"] != nil && raw["message"] != nil {
		if _, ok := raw["data"]; ok && json.Unmarshal(body, &env) == nil {
			a.envelope, a.code = true, env.Code
		}
	}
	return a, env
}

// replayAll sends every answered operation once more with its key: the
// answer must be the recorded one (idempotency across restarts).
func (r *runner) replayAll(ctx context.Context, rng *rand.Rand, ops []*shopOp, clients int) []string {
	var mu sync.Mutex
	var bad []string
	copies := make([]*shopOp, len(ops))
	for i, o := range ops {
		copies[i] = &shopOp{i: o.i, kind: o.kind, m: o.m, card: o.card, amount: o.amount, key: o.key, path: o.path, body: o.body}
	}
	r2 := &runner{targets: r.targets, client: r.client, giveUp: time.Minute}
	r2.run(ctx, rng, copies, clients)
	for i, o := range ops {
		c := copies[i]
		if !o.answered {
			continue
		}
		if c.answerText() != o.answerText() {
			mu.Lock()
			bad = append(bad, fmt.Sprintf("op %d (%s, key %s): answered %s, a replay with the same key answered %s",
				o.i, o.kind, o.key, o.answerText(), c.answerText()))
			mu.Unlock()
		}
	}
	return bad
}
