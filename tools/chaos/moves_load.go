package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/tools/internal/harness"
)

// The load of the move scenarios (moves.go): shop operations with their
// Idempotency-Keys on every merchant of both cells, the moving merchant's
// on clients of their own, and network authorizations with their clearings
// or reversals on the moving merchant's cards, from the start of the load
// until stop is closed.

// pauseWatch watches the moving merchant's attempts: each must be a 2xx,
// or a 503 carrying Retry-After (the pause); anything else is a violation.
// The first and the last 503 are the pause as the merchant saw it.
type pauseWatch struct {
	mu                sync.Mutex
	ok, unavailable   int
	bad               int
	firstBad          string
	first503, last503 time.Time
	// lostOK: an attempt without an answer is counted in lost, not bad
	// (the serving gateway is killed and restarted in that run).
	lostOK bool
	lost   int
}

func (w *pauseWatch) observe(a attempt) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case a.transport == nil && a.status >= 200 && a.status <= 299:
		w.ok++
	case a.transport != nil && w.lostOK:
		w.lost++
	case a.transport == nil && a.status == 503 && a.retryAfter > 0:
		w.unavailable++
		if w.first503.IsZero() {
			w.first503 = a.start
		}
		w.last503 = a.end
	default:
		w.bad++
		if w.firstBad == "" {
			w.firstBad = fmt.Sprintf("HTTP %d (Retry-After %s), %v, at %s", a.status, a.retryAfter, a.transport, a.end.Format("15:04:05.000"))
		}
	}
}

// seen is the span from the first 503 to the last (0: none).
func (w *pauseWatch) seen() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last503.Sub(w.first503)
}

// moveLoad is one scenario's load, running.
type moveLoad struct {
	rMove, rOther     *runner
	opsMove, opsOther []*shopOp
	watch             *pauseWatch
	others            *cellWatch  // every other merchant: no attempt outside 2xx
	othersKilled      *pauseWatch // instead, when the serving gateway is killed: 2xx, 503 with Retry-After, or no answer
	holds             []*holdPlan
	net               netDriver
	stop              chan struct{}
	wg                sync.WaitGroup
	holdsMax          int
}

// moveLoadOptions: the load's shape; ops bound each side's operations
// (the load ends at stop or when they are all sent, whichever is first).
type moveLoadOptions struct {
	label       string // unique per scenario: the keys and message ids carry it
	gwKilled    bool   // the serving gateway is killed in this run
	clients     int
	ops         int
	holds       int
	callbackURL string
}

// startMoveLoad starts the load on gw: moving's operations on their own
// runner, others' on another, holds on moving's network cards.
func startMoveLoad(ctx context.Context, rng *rand.Rand, gw *harness.Gateway, moving *merchant, others []*merchant, o moveLoadOptions) (*moveLoad, error) {
	d, err := newHTTPNetDriver([]*harness.Gateway{gw})
	if err != nil {
		return nil, err
	}
	gws := []*harness.Gateway{gw}
	ld := &moveLoad{rMove: newRunner(gws, o.clients), rOther: newRunner(gws, o.clients), watch: &pauseWatch{},
		others: &cellWatch{warm: time.Now()}, net: d, stop: make(chan struct{}), holdsMax: o.holds}
	ld.rMove.observe = ld.watch.observe
	ld.rOther.observe = ld.others.observe
	if o.gwKilled {
		ld.watch.lostOK = true
		ld.othersKilled = &pauseWatch{lostOK: true}
		ld.rOther.observe = ld.othersKilled.observe
	}
	ld.opsMove = planShopOps(rng, []*merchant{moving}, planOptions{n: o.ops, createPercent: 15, freezePercent: 4,
		callbackURL: o.callbackURL, keyPrefix: o.label + "-move"})
	ld.opsOther = planShopOps(rng, others, planOptions{n: 2 * o.ops, createPercent: 15, freezePercent: 4,
		callbackURL: o.callbackURL, keyPrefix: o.label + "-other"})
	seeds := [3]uint64{rng.Uint64(), rng.Uint64(), rng.Uint64()}
	ld.wg.Add(3)
	go func() {
		defer ld.wg.Done()
		n := ld.rMove.runUntil(ctx, rand.New(rand.NewPCG(seeds[0], 1)), ld.opsMove, max(1, o.clients/2), ld.stop)
		ld.opsMove = ld.opsMove[:n]
	}()
	go func() {
		defer ld.wg.Done()
		n := ld.rOther.runUntil(ctx, rand.New(rand.NewPCG(seeds[1], 2)), ld.opsOther, o.clients, ld.stop)
		ld.opsOther = ld.opsOther[:n]
	}()
	go func() {
		defer ld.wg.Done()
		ld.runHolds(ctx, rand.New(rand.NewPCG(seeds[2], 3)), moving, o.label)
	}()
	return ld, nil
}

// runHolds authorizes holds on the moving merchant's network cards one
// after the other, each cleared (part of it) or reversed (whole) at once,
// until stop: across the move, its pause included. An authorization in
// the pause is declined 91 by the router; a clearing or a reversal then
// answered 503, which the network client repeats with its message id.
func (ld *moveLoad) runHolds(ctx context.Context, rng *rand.Rand, m *merchant, label string) {
	for i := 0; i < ld.holdsMax; i++ {
		select {
		case <-ld.stop:
			return
		case <-ctx.Done():
			return
		case <-time.After(30 * time.Millisecond): // a pace, not a synchronisation: the cards' funds last
		}
		p := &holdPlan{card: m.netCards[rng.IntN(len(m.netCards))], amount: 1_00 + rng.Int64N(40_00),
			authMsg: fmt.Sprintf("%s-auth-%d", label, i), targets: [2]int{0, -1}}
		h := &holdMsg{kind: "reverse", id: fmt.Sprintf("%s-msg-%d", label, i), dup: -1}
		if rng.IntN(100) < 60 {
			h.kind, h.amount = "clear", 1+rng.Int64N(p.amount)
		}
		p.msgs = []*holdMsg{h}
		runHold(ctx, ld.net, p)
		ld.holds = append(ld.holds, p)
	}
}

// finish stops the load and waits for every operation sent to be answered.
func (ld *moveLoad) finish() {
	close(ld.stop)
	ld.wg.Wait()
}

// checkAuthorizations: every authorization of the moving merchant's cards
// was approved, or declined 91 (the router's, in the pause); the count of
// 91s.
func (ld *moveLoad) checkAuthorizations(add func(string, ...any)) (declined91 int) {
	for _, p := range ld.holds {
		switch {
		case len(p.violation) > 0:
			for _, v := range p.violation {
				add("%s", v)
			}
		case p.approved && p.authAns.respCode == "00":
		case !p.approved && p.authAns.respCode == "91" && p.authID == "":
			declined91++
		default:
			add("authorization %s of the moving merchant's card answered %s: neither approved nor the pause's 91", p.authMsg, p.authAns.text())
		}
	}
	return declined91
}

// replayHolds sends every answered network message once more with its
// message id: the answer must be the first one. An authorization declined
// 91 was not stored (the router's decline) and is not repeated.
func (ld *moveLoad) replayHolds(ctx context.Context, add func(string, ...any)) {
	for _, p := range ld.holds {
		if !p.approved {
			continue
		}
		req := network.AuthRequest{MessageID: p.authMsg, CardNo: p.card.no, Amount: p.amount, Currency: p.card.m.cur,
			MerchantName: "Chaos Store", MCC: "5999", MerchantCountry: "US"}
		a, _, err := sendUntilAnswered(ctx, func() (netAnswer, error) { return ld.net.authorize(ctx, 0, req) })
		if err != nil || a.text() != p.authAns.text() {
			add("authorization %s: answered %s, a replay with its message id answered %s (%v)", p.authMsg, p.authAns.text(), a.text(), err)
		}
		for _, m := range p.msgs {
			if len(m.answers) == 0 || m.answers[0].code == -1 {
				continue
			}
			a, _, err := sendUntilAnswered(ctx, func() (netAnswer, error) {
				if m.kind == "clear" {
					return ld.net.clear(ctx, 0, network.ClearRequest{MessageID: m.id, AuthID: p.authID, Amount: m.amount})
				}
				return ld.net.reverse(ctx, 0, network.ReverseRequest{MessageID: m.id, AuthID: p.authID, Amount: m.amount})
			})
			if err != nil || a.text() != m.answers[0].text() {
				add("%s %s of %s: answered %s, a replay with its message id answered %s (%v)", m.kind, m.id, p.authID, m.answers[0].text(), a.text(), err)
			}
		}
	}
}
