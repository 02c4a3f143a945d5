package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paygate/gateway/api/client"
	"github.com/paygate/gateway/internal/cards"
	merchants "github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
	"github.com/paygate/gateway/tools/internal/harness"
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
		m, creds, err := l.merchants.CreateMerchant(ctx, merchants.Spec{Name: fmt.Sprintf("Chaos shop %d", i+1),
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
	i        int
	kind     string
	m        *merchant
	card     *card
	amount   int64
	key      string
	create   *client.CreateCardRequest
	transfer *client.TransferRequest
	dup      bool // sent to two gateways at once

	mu          sync.Mutex
	attempts    int
	answered    bool
	answeredAt  time.Time
	firstSentAt time.Time
	lastEnd     time.Time
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

// again is the same operation, unsent: the same key and request.
func (o *shopOp) again() *shopOp {
	return &shopOp{i: o.i, kind: o.kind, m: o.m, card: o.card, amount: o.amount, key: o.key, create: o.create, transfer: o.transfer}
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
			o.kind = kindCreate
			o.amount = rng.Int64N(50_00)
			o.create = &client.CreateCardRequest{BIN: m.bin, Currency: m.cur, Amount: client.MustDecimal(postings.FormatMinor(o.amount, cur)),
				Remark: "chaos", CallbackURL: p.callbackURL}
		case r < p.createPercent+p.freezePercent:
			o.card = m.cards[rng.IntN(len(m.cards))]
			o.kind = kindFreeze
			if rng.IntN(2) == 0 {
				o.kind = kindUnfreeze
			}
		default:
			o.card = m.cards[rng.IntN(len(m.cards))]
			o.kind = kindIn
			if rng.IntN(100) < 45 {
				o.kind = kindOut
			}
			o.amount = 1 + rng.Int64N(20_00)
			if o.kind == kindOut && rng.IntN(100) < 5 {
				o.amount = 1_000_000_00 // more than any card holds: 1001, stored and replayed like a success
			}
			dir := client.DirectionIn
			if o.kind == kindOut {
				dir = client.DirectionOut
			}
			o.transfer = &client.TransferRequest{CardNo: o.card.no, Amount: client.MustDecimal(postings.FormatMinor(o.amount, cur)),
				Currency: m.cur, Direction: dir}
		}
		o.dup = rng.IntN(100) < p.dupPercent
		ops = append(ops, o)
	}
	return ops
}

// attempt is one HTTP exchange, as the observers see it.
type attempt struct {
	start, end time.Time
	transport  error // no HTTP answer at all
	status     int
	envelope   bool // the body was the {code, message, data} envelope
	code       int
	retryAfter time.Duration // the answer's Retry-After (429, 503); 0 without one
}

// runner sends operations through api/client, each retried with its
// Idempotency-Key until it is answered: the client's own retries (a lost
// answer, 429, 503, and 1009 here), with a budget of giveUp.
type runner struct {
	gws      []*harness.Gateway
	observe  func(a attempt) // may be nil; called for every exchange
	answered atomic.Int64
	attempts atomic.Int64
	// counts of non-final answers
	transportErrors, status5xx, status500, status429, inProgress atomic.Int64
	giveUp                                                       time.Duration

	mu      sync.Mutex
	clients map[clientKey]*client.Client
}

// clientKey names a client: a merchant on one gateway, or on any (-1: each
// attempt goes to a gateway drawn at random, like a load balancer).
type clientKey struct {
	shopNo string
	target int
}

func newRunner(gws []*harness.Gateway, _ int) *runner {
	return &runner{gws: gws, giveUp: 5 * time.Minute, clients: map[clientKey]*client.Client{}}
}

// retryUntil is the retry policy of an operation: until answered, up to
// the deadline; back-off from 20 ms to 320 ms, jittered, or Retry-After.
func retryUntil(deadline time.Time) client.RetryPolicy {
	return client.RetryPolicy{MaxAttempts: 1 << 20, MaxElapsed: time.Until(deadline), BaseDelay: 20 * time.Millisecond,
		MaxDelay: 320 * time.Millisecond, RetryInProgress: true}
}

func (r *runner) client(m *merchant, target int) (*client.Client, error) {
	k := clientKey{m.shopNo, target}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.clients[k]; c != nil {
		return c, nil
	}
	g := r.gws[max(target, 0)]
	hc := g.HTTPClient()
	if target < 0 && len(r.gws) > 1 {
		hosts := make([]string, len(r.gws))
		next := make([]http.RoundTripper, len(r.gws))
		for i, g := range r.gws {
			// Each gateway's own transport: it trusts that gateway's
			// self-signed certificate only.
			hosts[i], next[i] = g.Addr(), g.HTTPClient().Transport
		}
		hc = &http.Client{Transport: spread{hosts: hosts, next: next}, Timeout: hc.Timeout}
	}
	c, err := client.New(client.Config{BaseURL: g.BaseURL(), ShopNo: m.shopNo, PublicKey: m.pub, HTTPClient: hc, Retry: client.NoRetry})
	if err != nil {
		return nil, err
	}
	r.clients[k] = c
	return c, nil
}

// spread sends each request to one of hosts drawn at random, through that
// host's transport.
type spread struct {
	hosts []string
	next  []http.RoundTripper
}

func (s spread) RoundTrip(req *http.Request) (*http.Response, error) {
	i := rand.IntN(len(s.hosts))
	out := req.Clone(req.Context())
	out.URL.Host = s.hosts[i]
	out.Host = ""
	return s.next[i].RoundTrip(out)
}

// run sends ops from `clients` goroutines and returns when every one is
// answered (or given up after r.giveUp).
func (r *runner) run(ctx context.Context, rng *rand.Rand, ops []*shopOp, clients int) {
	r.runUntil(ctx, rng, ops, clients, nil)
}

// runUntil is run that stops sending new operations once stop is closed
// (nil: never) and returns how many it sent, the first ones of ops: each
// of them answered (or given up) when it returns.
func (r *runner) runUntil(ctx context.Context, rng *rand.Rand, ops []*shopOp, clients int, stop <-chan struct{}) int {
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
	sent := 0
feed:
	for _, o := range ops {
		select {
		case ch <- o:
			sent++
		case <-stop:
			break feed
		case <-ctx.Done():
		}
	}
	close(ch)
	wg.Wait()
	return sent
}

func (r *runner) do(ctx context.Context, rng *rand.Rand, o *shopOp) {
	if !o.dup || len(r.gws) < 2 {
		r.loop(ctx, o, -1)
		r.answered.Add(1)
		return
	}
	// The same request to two gateways at once: one runs it, the other
	// waits (1009) or replays; both must end with the same answer.
	a := rng.IntN(len(r.gws))
	b := (a + 1 + rng.IntN(len(r.gws)-1)) % len(r.gws)
	twin := o.again()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.loop(ctx, twin, b)
	}()
	r.loop(ctx, o, a)
	wg.Wait()
	o.mu.Lock()
	o.attempts += twin.attempts
	if twin.answerText() != o.answerText() {
		o.dupMismatch = fmt.Sprintf("gateway %d answered %s, gateway %d answered %s", a, o.answerText(), b, twin.answerText())
	}
	o.mu.Unlock()
	r.answered.Add(1)
}

// observeAttempt counts one exchange of o and tells the observer.
func (r *runner) observeAttempt(o *shopOp, ca client.Attempt) {
	a := attempt{start: ca.Start, end: ca.End, status: ca.Status, envelope: ca.Envelope, code: int(ca.Code)}
	if ca.Err != nil && ca.Status == 0 {
		a.transport = ca.Err
	}
	if ca.Err != nil {
		a.retryAfter = ca.Err.RetryAfter
	}
	r.attempts.Add(1)
	o.mu.Lock()
	o.attempts++
	o.lastEnd = ca.End
	o.mu.Unlock()
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
	}
	if r.observe != nil {
		r.observe(a)
	}
}

// loop sends o to target (-1: any) until it is answered: a success or a
// business failure. The client retries what is unanswered (no connection,
// reset, 503, 429, 1009) with the same key; a 500, a bug the checks count,
// is sent again here, as before the client existed.
func (r *runner) loop(ctx context.Context, o *shopOp, target int) {
	c, err := r.client(o.m, target)
	if err != nil {
		o.mu.Lock()
		o.refused = err.Error()
		o.mu.Unlock()
		return
	}
	deadline := time.Now().Add(r.giveUp)
	o.mu.Lock()
	if o.firstSentAt.IsZero() {
		o.firstSentAt = time.Now()
	}
	o.mu.Unlock()
	opts := []client.CallOption{client.WithIdempotencyKey(o.key),
		client.WithAttemptObserver(func(a client.Attempt) { r.observeAttempt(o, a) }),
		client.WithRetry(retryUntil(deadline))}
	for {
		txID, cardNo, err := r.send(ctx, c, o, opts)
		var e *client.Error
		switch {
		case err == nil:
			o.mu.Lock()
			o.answered, o.answeredAt, o.status, o.code, o.message = true, o.lastEnd, http.StatusOK, 200, "success"
			o.txID = txID
			if o.kind == kindCreate {
				o.cardNo = cardNo
			}
			o.mu.Unlock()
			return
		case !errors.As(err, &e):
			return
		case e.Status == http.StatusInternalServerError && time.Now().Before(deadline) && ctx.Err() == nil:
			time.Sleep(20 * time.Millisecond)
			continue
		case e.Temporary():
			return // given up: unanswered
		case e.Business():
			o.mu.Lock()
			o.answered, o.answeredAt, o.status, o.code, o.message = true, o.lastEnd, e.Status, int(e.Code), e.Message
			o.mu.Unlock()
			return
		default:
			o.mu.Lock()
			o.answered, o.answeredAt, o.status, o.code, o.message = true, o.lastEnd, e.Status, int(e.Code), e.Message
			o.refused = fmt.Sprintf("HTTP %d code %d: %s", e.Status, e.Code, e.Message)
			o.mu.Unlock()
			return
		}
	}
}

// send is one call of the operation's kind (with the client's retries).
func (r *runner) send(ctx context.Context, c *client.Client, o *shopOp, opts []client.CallOption) (txID, cardNo string, err error) {
	switch o.kind {
	case kindCreate:
		card, err := c.CreateCard(ctx, *o.create, opts...)
		if err != nil {
			return "", "", err
		}
		return "", card.CardNo, nil
	case kindFreeze:
		return "", "", c.FreezeCard(ctx, client.FreezeCardRequest{CardNo: o.card.no}, opts...)
	case kindUnfreeze:
		return "", "", c.UnfreezeCard(ctx, o.card.no, opts...)
	default:
		t, err := c.Transfer(ctx, *o.transfer, opts...)
		if err != nil {
			return "", "", err
		}
		return t.TxID, "", nil
	}
}

// replayAll sends every answered operation once more with its key: the
// answer must be the recorded one (idempotency across restarts).
func (r *runner) replayAll(ctx context.Context, rng *rand.Rand, ops []*shopOp, clients int) []string {
	var mu sync.Mutex
	var bad []string
	copies := make([]*shopOp, len(ops))
	for i, o := range ops {
		copies[i] = o.again()
	}
	r2 := &runner{gws: r.gws, giveUp: time.Minute, clients: map[clientKey]*client.Client{}}
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
