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

type outageOptions struct {
	ops, clients int
	down         time.Duration
	// promptMax is the longest an answer may take while the database is
	// down: the gateway's connect time-out (5 s) and a margin.
	promptMax time.Duration
}

// runOutage stops PostgreSQL in immediate mode under load, keeps it down,
// restarts it, and watches the gateway: prompt error envelopes during the
// outage, recovery without a restart of the gateway, and the invariants.
func runOutage(ctx context.Context, e *env, seed uint64, o outageOptions) *result {
	start := time.Now()
	res := &result{fault: "database outage", seed: seed, ops: o.ops, kills: 1, restarts: 1,
		injected: fmt.Sprintf("PostgreSQL stopped in immediate mode (SIGQUIT) under load, down %s, restarted on the same data directory", o.down),
		reproduce: fmt.Sprintf("make chaos CHAOS_ARGS='-only outage -seeds %d -ops %d -clients %d -outage %s'",
			seed, o.ops, o.clients, o.down)}
	_, fail := res.recorders(start)
	rng := rand.New(rand.NewPCG(seed, 2))
	url, db, l, err := e.newLedgerDB(ctx, fmt.Sprintf("chaos_outage_%d", seed), 8, ledger.Config{Shards: 2}, 0)
	if err != nil {
		return fail("%v", err)
	}
	ms, err := setupMerchants(ctx, l, 4, 8, 500_00, "")
	l.Close()
	db.Close()
	if err != nil {
		return fail("setup: %v", err)
	}
	g, err := e.startGateway(ctx, fmt.Sprintf("outage-%d", seed), url)
	if err != nil {
		return fail("%v", err)
	}
	defer g.Stop()
	_, pid := g.Alive()

	ops := planShopOps(rng, ms, planOptions{n: o.ops, createPercent: 20, keyPrefix: fmt.Sprintf("outage-%d", seed)})
	r := newRunner([]*harness.Gateway{g}, o.clients)

	// Every exchange is observed; the outage window is known afterwards.
	var mu sync.Mutex
	var seen []attempt
	r.observe = func(a attempt) {
		mu.Lock()
		seen = append(seen, a)
		mu.Unlock()
	}
	threshold := o.ops/5 + rng.IntN(o.ops/5)
	// killAt: SIGQUIT sent; down: the server is gone; restartAt: the
	// restart begins; up: it accepts connections again. Requests sent
	// between down and restartAt cannot succeed.
	var killAt, down, restartAt, up time.Time
	outageErr := make(chan error, 1)
	go func() {
		for r.answered.Load() < int64(threshold) {
			time.Sleep(time.Millisecond)
		}
		killAt = time.Now()
		e.killPG()
		down = time.Now()
		e.debugf("outage: PostgreSQL killed after %d answers (in %s)", r.answered.Load(), down.Sub(killAt).Round(time.Millisecond))
		time.Sleep(o.down)
		restartAt = time.Now()
		if err := e.restartPG(ctx); err != nil {
			outageErr <- err
			return
		}
		up = time.Now()
		e.debugf("outage: PostgreSQL back after %s (restart and crash recovery %s)", up.Sub(down).Round(time.Millisecond),
			up.Sub(restartAt).Round(time.Millisecond))
		outageErr <- nil
	}()
	r.run(ctx, rng, ops, o.clients)
	if err := <-outageErr; err != nil {
		return fail("restarting PostgreSQL: %v", err)
	}
	res.countAttempts(r, ops)

	// What the clients saw while the database was down.
	var during, envelopes, transport, successes, nonEnvelope int
	var maxLatency time.Duration
	var firstOK time.Time
	codes := map[string]int{}
	for _, a := range seen {
		if !a.start.Before(down) && a.start.Before(restartAt) {
			during++
			lat := a.end.Sub(a.start)
			maxLatency = max(maxLatency, lat)
			switch {
			case a.transport != nil:
				transport++
			case !a.envelope:
				nonEnvelope++
			case a.status == 200 && a.code == 200:
				successes++
			default:
				envelopes++
				codes[fmt.Sprintf("HTTP %d/%d", a.status, a.code)]++
			}
		}
		if !a.start.Before(up) && a.transport == nil && a.status == 200 && a.code == 200 && (firstOK.IsZero() || a.end.Before(firstOK)) {
			firstOK = a.end
		}
	}
	// The slowest answers to requests in flight when the database died.
	var inFlight time.Duration
	var restartingMax time.Duration
	var restartingN, restartingErr, restartingOK int
	for _, a := range seen {
		if a.start.Before(killAt) && a.end.After(killAt) {
			inFlight = max(inFlight, a.end.Sub(a.start))
		}
		if !a.start.Before(restartAt) && a.start.Before(up) {
			restartingN++
			restartingMax = max(restartingMax, a.end.Sub(a.start))
			if a.transport == nil && a.status == 200 && a.code == 200 {
				restartingOK++
			} else {
				restartingErr++
			}
		}
	}
	restarting := up.Sub(restartAt)
	if inFlight > o.promptMax {
		res.violations = append(res.violations, fmt.Sprintf("a request in flight when the database died took %s to answer (more than %s)",
			inFlight.Round(time.Millisecond), o.promptMax))
	}
	if restartingMax > o.promptMax {
		res.violations = append(res.violations, fmt.Sprintf("a request sent while PostgreSQL was restarting (crash recovery, %s) took %s to answer (more than %s): "+
			"the gateway waits for the database instead of answering 503 promptly", restarting.Round(time.Millisecond),
			restartingMax.Round(time.Millisecond), o.promptMax))
	}
	if n := r.status500.Load(); n > 0 {
		res.violations = append(res.violations, fmt.Sprintf("%d answers were HTTP 500 internal error (a COMMIT cut by the outage: its outcome is unknown, "+
			"which the API should answer 503 outcome_unknown, retry with the same key)", n))
	}
	if successes > 0 {
		res.violations = append(res.violations, fmt.Sprintf("%d requests sent while the database was down were answered success", successes))
	}
	if during == 0 {
		res.violations = append(res.violations, "no request was sent while the database was down: the load ended too early")
	}
	if transport > 0 {
		res.violations = append(res.violations, fmt.Sprintf("%d requests during the outage got no HTTP answer at all", transport))
	}
	if nonEnvelope > 0 {
		res.violations = append(res.violations, fmt.Sprintf("%d answers during the outage were not the error envelope", nonEnvelope))
	}
	if maxLatency > o.promptMax {
		res.violations = append(res.violations, fmt.Sprintf("an answer during the outage took %s (more than %s)", maxLatency.Round(time.Millisecond), o.promptMax))
	}
	if firstOK.IsZero() {
		res.violations = append(res.violations, "no request succeeded after PostgreSQL came back: the gateway did not reconnect")
	}
	if alive, p := g.Alive(); !alive || p != pid || g.Starts() != 1 {
		res.violations = append(res.violations, fmt.Sprintf("the gateway did not survive the outage (alive=%v pid %d→%d)", alive, pid, p))
	}

	// The slowest exchanges, placed on the outage's time line.
	slow := append([]attempt(nil), seen...)
	sort.Slice(slow, func(i, j int) bool { return slow[i].end.Sub(slow[i].start) > slow[j].end.Sub(slow[j].start) })
	for i := 0; i < len(slow) && i < 5; i++ {
		a := slow[i]
		res.notes = append(res.notes, fmt.Sprintf("slow #%d: sent at kill%+.3fs (down at %+.3fs, restart at %+.3fs, up at %+.3fs), took %s, answered HTTP %d code %d",
			i+1, a.start.Sub(killAt).Seconds(), down.Sub(killAt).Seconds(), restartAt.Sub(killAt).Seconds(), up.Sub(killAt).Seconds(),
			a.end.Sub(a.start).Round(time.Millisecond), a.status, a.code))
	}

	db2, l2, err := e.openLedger(ctx, url, 8, ledger.Config{Shards: 1}, 0)
	if err != nil {
		return fail("reopening the ledger after the outage: %v", err)
	}
	defer db2.Close()
	defer l2.Close()
	v, facts := checkShopOps(ctx, db2, l2, ms, ops, []time.Time{down})
	res.violations = append(res.violations, v...)
	res.violations = append(res.violations, r.replayAll(ctx, rng, ops, o.clients)...)
	if ok, out := e.auditVerify(ctx, url); !ok {
		res.violations = append(res.violations, "gateway audit verify: "+out)
	}
	var codeList []string
	for k, n := range codes {
		codeList = append(codeList, fmt.Sprintf("%s ×%d", k, n))
	}
	sort.Strings(codeList)
	reconnect := "never"
	if !firstOK.IsZero() {
		reconnect = firstOK.Sub(up).Round(time.Millisecond).String()
	}
	res.notes = append(res.notes,
		fmt.Sprintf("PostgreSQL down %s, then %s restarting (crash recovery); %d requests sent while it was down: %d error envelopes %v, %d successes; slowest answer %s",
			restartAt.Sub(down).Round(time.Millisecond), restarting.Round(time.Millisecond), during, envelopes, codeList, successes,
			maxLatency.Round(time.Millisecond)),
		fmt.Sprintf("%d requests sent while it restarted: %d errors, %d successes (after waiting for it); slowest answer %s",
			restartingN, restartingErr, restartingOK, restartingMax.Round(time.Millisecond)),
		fmt.Sprintf("slowest answer to a request in flight at the kill: %s; first success %s after PostgreSQL was back (same gateway process, pid %d)",
			inFlight.Round(time.Millisecond), reconnect, pid),
		fmt.Sprintf("%d succeeded, %d business failures; %d committed as the database died and recovered by the retry",
			facts.succeeded, facts.businessFailures, facts.lostAnswers),
		fmt.Sprintf("%d attempts: %d HTTP 5xx (%d of them 500), %d 1009, %d without an answer", res.attempts, r.status5xx.Load(),
			r.status500.Load(), r.inProgress.Load(), r.transportErrors.Load()))
	res.elapsed = time.Since(start)
	return res
}
