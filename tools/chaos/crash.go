package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/tools/internal/harness"
)

// result is one line of the summary.
type result struct {
	fault      string
	injected   string
	ops        int
	kills      int
	restarts   int
	retries    int // operations that needed more than one attempt
	attempts   int64
	violations []string
	seed       uint64
	reproduce  string
	notes      []string
	elapsed    time.Duration
	ha         *haFigures // the HA scenarios' figures (ha_loss.go)
}

type crashOptions struct {
	ops, clients, kills int
}

// runCrash is the crash scenario for one seed: concurrent money operations
// over HTTP, the gateway killed with SIGKILL at seeded moments and
// restarted, every client retrying its unanswered requests with the same
// Idempotency-Key until answered; then the invariants and audit verify.
func runCrash(ctx context.Context, e *env, seed uint64, o crashOptions) *result {
	start := time.Now()
	res := &result{fault: "crash (kill -9)", seed: seed, ops: o.ops,
		injected:  fmt.Sprintf("SIGKILL of gateway serve ×%d during %d concurrent requests, restart on the same port", o.kills, o.clients),
		reproduce: fmt.Sprintf("make chaos CHAOS_ARGS='-only crash -seeds %d -ops %d -clients %d -kills %d'", seed, o.ops, o.clients, o.kills)}
	_, fail := res.recorders(start)
	rng := rand.New(rand.NewPCG(seed, 1))
	url, db, l, err := e.newLedgerDB(ctx, fmt.Sprintf("chaos_crash_%d", seed), 8, ledger.Config{Shards: 2}, 0)
	if err != nil {
		return fail("%v", err)
	}
	defer db.Close()
	defer l.Close()
	ms, err := setupMerchants(ctx, l, 4, 8, 500_00, "")
	if err != nil {
		return fail("setup: %v", err)
	}
	g, err := e.startGateway(ctx, fmt.Sprintf("crash-%d", seed), url)
	if err != nil {
		return fail("%v", err)
	}
	defer g.Stop()

	ops := planShopOps(rng, ms, planOptions{n: o.ops, createPercent: 20, keyPrefix: fmt.Sprintf("crash-%d", seed)})
	// The kill moments: after a seeded number of answers each, and how long
	// the gateway stays down.
	thresholds := make([]int, o.kills)
	downs := make([]time.Duration, o.kills)
	for i := range thresholds {
		thresholds[i] = o.ops/10 + rng.IntN(o.ops*7/10)
		downs[i] = time.Duration(100+rng.IntN(1400)) * time.Millisecond
	}
	sort.Ints(thresholds)

	r := newRunner([]*harness.Gateway{g}, o.clients)
	var killsMu sync.Mutex
	var kills []time.Time
	inFlightAtKill := 0
	lctx, cancel := context.WithCancel(ctx)
	killerDone := make(chan error, 1)
	go func() {
		for i, th := range thresholds {
			for r.answered.Load() < int64(th) {
				select {
				case <-lctx.Done():
					killerDone <- nil
					return
				case <-time.After(time.Millisecond):
				}
			}
			// Count what is in flight (sent, not answered) at the kill.
			for _, op := range ops {
				op.mu.Lock()
				if !op.firstSentAt.IsZero() && !op.answered {
					inFlightAtKill++
				}
				op.mu.Unlock()
			}
			t := time.Now()
			g.Kill()
			killsMu.Lock()
			kills = append(kills, t)
			killsMu.Unlock()
			e.debugf("crash seed %d: killed the gateway after %d answers; down for %s", seed, r.answered.Load(), downs[i])
			time.Sleep(downs[i])
			if err := g.Start(ctx); err != nil {
				killerDone <- err
				return
			}
		}
		killerDone <- nil
	}()
	r.run(ctx, rng, ops, o.clients)
	cancel()
	if err := <-killerDone; err != nil {
		return fail("restarting the gateway: %v", err)
	}
	res.kills = len(kills)
	res.restarts = g.Starts() - 1
	res.countAttempts(r, ops)
	ackedBefore := 0
	if len(kills) > 0 {
		for _, op := range ops {
			if op.answered && op.answeredAt.Before(kills[0]) {
				ackedBefore++
			}
		}
	}

	if n := r.status500.Load(); n > 0 {
		res.violations = append(res.violations, fmt.Sprintf("%d answers were HTTP 500 internal error", n))
	}
	v, facts := checkShopOps(ctx, db, l, ms, ops, kills)
	res.violations = append(res.violations, v...)
	replay := r.replayAll(ctx, rng, ops, o.clients)
	res.violations = append(res.violations, replay...)
	if ok, out := e.auditVerify(ctx, url); !ok {
		res.violations = append(res.violations, "gateway audit verify: "+out)
	}
	res.notes = append(res.notes,
		fmt.Sprintf("%d succeeded, %d business failures (e.g. 1001); %d acknowledged before the first kill", facts.succeeded, facts.businessFailures, ackedBefore),
		fmt.Sprintf("%d requests in flight at the kills; %d committed before a kill whose answer was lost and recovered by the retry", inFlightAtKill, facts.lostAnswers),
		fmt.Sprintf("%d attempts: %d without an answer (connection refused/reset), %d HTTP 5xx, %d answered 1009 (in progress)",
			res.attempts, r.transportErrors.Load(), r.status5xx.Load(), r.inProgress.Load()),
		fmt.Sprintf("every answered operation sent again with its key after the run: %d different answers", len(replay)))
	res.elapsed = time.Since(start)
	return res
}
