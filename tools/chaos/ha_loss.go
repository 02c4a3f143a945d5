package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/paygate/gateway/internal/pgha"
)

// Which node a loss scenario kills.
const (
	losePrimary = "primary lost"
	loseStandby = "standby lost"
	// freezePrimary stops every process of the primary (SIGSTOP: no RST,
	// connections open, nothing answered) and continues them once the
	// standby is promoted: the old primary must come back demoted.
	freezePrimary = "primary frozen"
	// The same losses in a formation of three data nodes (ha_three.go).
	losePrimary3 = "primary lost, 3 nodes"
	loseStandby3 = "standby lost, 3 nodes"
)

// scenarioNames are the -only names of the loss scenarios.
var scenarioNames = map[string]string{losePrimary: "primary", loseStandby: "standby", freezePrimary: "frozen",
	losePrimary3: "primary3", loseStandby3: "standby3"}

// runHALoss is the primary-lost or standby-lost scenario for one seed: load
// from several gateways with idempotency keys, a remittance stream and
// holds waiting for expiry; at a seeded moment the node's keeper and
// PostgreSQL get SIGKILL (Formation.Kill, its whole process group); the
// load goes on; then the killed node's keeper runs again and the node
// rejoins as the standby. Then every check.
func runHALoss(ctx context.Context, e *env, h *haFormation, seed uint64, which string, o haOptions) *result {
	start := time.Now()
	short := scenarioNames[which]
	how := "SIGKILL"
	if which == freezePrimary {
		how = "SIGSTOP (SIGCONT after the promotion)"
	}
	standbyLost := which == loseStandby || which == loseStandby3
	res := &result{fault: which, seed: seed,
		injected: fmt.Sprintf("%s of the %s's pg_autoctl and PostgreSQL under load from %d gateways", how,
			map[bool]string{true: "standby", false: "primary"}[standbyLost], o.instances),
		reproduce: fmt.Sprintf("make chaos-ha CHAOS_ARGS='-only %s -seeds %d -instances %d -ops %d -remittances %d'",
			short, seed, o.instances, o.ops, o.remits)}
	add, fail := res.recorders(start)
	rng := rand.New(rand.NewPCG(seed, 19))
	if err := h.waitSynchronous(ctx, 3*time.Minute); err != nil {
		return fail("before the run: %v", err)
	}
	dbName := fmt.Sprintf("chaos_%s_%d", short, seed)
	s, err := e.newHAStack(ctx, h, dbName, o)
	if err != nil {
		return fail("setup: %v", err)
	}
	defer s.stop()

	ld := &haLoad{}
	ld.ops = planShopOps(rng, s.ms, planOptions{n: o.ops, createPercent: 15, freezePercent: 4, dupPercent: 5,
		callbackURL: s.rcv.url, keyPrefix: fmt.Sprintf("ha-%s-%d", short, seed)})
	ld.remits = planRemits(rng, s.ms, o.remits, haSanctioned, s.rcv.url)
	for _, p := range ld.remits {
		p.key = fmt.Sprintf("ha-%s-%d-%s", short, seed, p.key)
	}
	if ld.holds, err = authorizeHolds(ctx, rng, s.l, s.ms, o.holds, seed); err != nil {
		return fail("holds: %v", err)
	}
	ld.r = newRunner(s.gws, o.clients)
	ld.r.observe = ld.observe

	// The kill: after a seeded share (30–60 %) of the operations is answered.
	threshold := int64(o.ops*3/10 + rng.IntN(o.ops*3/10+1))
	var victim *pgha.Keeper
	var killedAt time.Time
	killed := make(chan error, 1)
	lctx, stopKiller := context.WithCancel(ctx)
	go func() {
		for ld.r.answered.Load() < threshold {
			select {
			case <-lctx.Done():
				killed <- fmt.Errorf("the load ended before the kill")
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
		primary, standby, err := h.roles(ctx)
		if err != nil {
			killed <- err
			return
		}
		victim = primary
		if standbyLost {
			victim = standby
		}
		killedAt = time.Now()
		ld.setFault(killedAt)
		if which == freezePrimary {
			h.f.Freeze(victim)
			// Continued once the other node is promoted (or after a
			// bound): the keeper must find itself demoted.
			wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			werr := h.f.WaitState(wctx, standby.Name, "wait_primary", "primary")
			cancel()
			h.f.Thaw(victim)
			if werr != nil {
				killed <- fmt.Errorf("the standby was not promoted while the primary was frozen: %w", werr)
				return
			}
			e.debugf("%s seed %d: froze %s, promoted %s after %s", which, seed, victim.Name, standby.Name,
				time.Since(killedAt).Round(time.Millisecond))
			killed <- nil
			return
		}
		h.f.Kill(victim)
		e.debugf("%s seed %d: killed %s after %d answers", which, seed, victim.Name, ld.r.answered.Load())
		killed <- nil
	}()
	copies := sampleCopies(ctx, h.f.URL("postgres"))
	remitDone := make(chan error, 1)
	go func() { remitDone <- ld.createRemits(ctx, s.l) }()
	ld.r.run(ctx, rng, ld.ops, o.clients)
	if err := <-remitDone; err != nil {
		add("%v", err)
	}
	stopKiller()
	if err := <-killed; err != nil {
		return fail("the kill: %v", err)
	}
	loadDone := time.Now()

	// The killed node comes back: its keeper runs again and rejoins as
	// the standby (pg_rewind, or a new base backup).
	restarted := time.Now()
	if err := h.f.Restart(victim); err != nil {
		return fail("restarting %s's keeper: %v", victim.Name, err)
	}
	rejoinErr := h.f.WaitState(ctx, victim.Name, "secondary")
	rejoin := time.Since(restarted)
	if rejoinErr != nil {
		add("%s did not rejoin as the standby: %v", victim.Name, rejoinErr)
	}

	s.settle(ctx, ld, add)
	if n := ld.r.status500.Load(); n > 0 {
		add("%d answers were HTTP 500 internal error", n)
	}
	v, facts := checkShopOps(ctx, s.db, s.l, s.ms, ld.ops, []time.Time{killedAt})
	res.violations = append(res.violations, v...)
	res.violations = append(res.violations, ld.r.replayAll(ctx, rng, ld.ops, o.clients)...)
	hv, hf := checkHolds(ctx, s.db, s.l, s.ms, ld.holds)
	res.violations = append(res.violations, hv...)
	if hf.expired != hf.approved {
		add("%d of %d approved holds expired; the rest were left open", hf.expired, hf.approved)
	}
	rv, rf := checkRemits(ctx, s.db, ld.remits)
	res.violations = append(res.violations, rv...)
	cv, cbNote := checkCallbacksHA(ctx, s.db, s.rcv)
	res.violations = append(res.violations, cv...)
	acks, err := countAcked(ctx, s.db, ld.ops, ld.remits)
	if err != nil {
		add("counting acknowledged operations: %v", err)
	}
	if acks.lost > 0 || acks.doubled > 0 {
		add("%d acknowledged operations lost, %d doubled", acks.lost, acks.doubled)
	}
	for _, g := range s.gws {
		if alive, _ := g.Alive(); !alive {
			add("%s died: %s", g.Name(), tailFile(g.LogPath(), 5))
		}
	}
	if ok, out := e.auditVerify(ctx, s.url); !ok {
		add("gateway audit verify on the new primary: %s", out)
	}
	// Caught up: the rejoined node holds the same journal as the primary.
	caughtStart := time.Now()
	var catchUp time.Duration
	if rejoinErr == nil {
		if err := h.waitCaughtUp(ctx, victim, dbName, s.db, 2*time.Minute); err != nil {
			add("the rejoined %s did not catch up: %v", victim.Name, err)
		}
		catchUp = rejoin + time.Since(caughtStart)
	}
	if err := h.waitSynchronous(ctx, time.Minute); err != nil {
		add("%v", err)
	}
	singleCopy := copies.finish()
	if which == loseStandby3 && singleCopy > 0 {
		add("%s of commits acknowledged with a single copy after one of three nodes was lost; want none", singleCopy.Round(time.Millisecond))
	}

	wf, err := workAfter(ctx, s.db, killedAt)
	if err != nil {
		add("what the workers did after the kill: %v", err)
	}
	if !standbyLost && wf.Created > 0 && wf.RemitSteps == 0 {
		add("%d remittances were created after the kill, but no worker moved any remittance after it", wf.Created)
	}
	ld.mu.Lock()
	firstWrite := time.Duration(0)
	if !ld.firstWriteAfter.IsZero() {
		firstWrite = ld.firstWriteAfter.Sub(killedAt)
	}
	slowest, unavailable, remitRetries := ld.slowestAfter, ld.unavailable, ld.remitRetries
	ld.mu.Unlock()
	if firstWrite == 0 {
		add("no write succeeded after the kill")
	}
	res.ops = len(ld.ops) + len(ld.remits) + len(ld.holds)
	res.kills, res.restarts = 1, 1
	res.countAttempts(ld.r, ld.ops)
	res.ha = &haFigures{acked: acks.acked, lost: acks.lost, doubled: acks.doubled, firstWrite: firstWrite,
		rejoin: rejoin, catchUp: catchUp, slowest: slowest, unavailable: unavailable, singleCopy: singleCopy, copiesMeasured: true}
	res.notes = append(res.notes,
		fmt.Sprintf("killed %s after %d answers; kill → first successful write %s; slowest successful attempt after the kill %s; %d answers 503 after the kill",
			victim.Name, threshold, firstWrite.Round(time.Millisecond), slowest.Round(time.Millisecond), unavailable),
		fmt.Sprintf("acknowledged %d operations (shop + remittances): %d lost, %d doubled", acks.acked, acks.lost, acks.doubled),
		fmt.Sprintf("single-copy window (the primary acknowledging without a synchronous standby, sampled every %s): %s",
			copiesEvery, singleCopy.Round(time.Millisecond)),
		fmt.Sprintf("shop: %d operations (%d succeeded, %d business failures), %d attempts (%d without an answer, %d HTTP 5xx, %d answered 1009), %d sent more than once (retries, and twins sent to two gateways); %d committed before the kill and answered after it",
			len(ld.ops), facts.succeeded, facts.businessFailures, ld.r.attempts.Load(), ld.r.transportErrors.Load(), ld.r.status5xx.Load(),
			ld.r.inProgress.Load(), res.retries, facts.lostAnswers),
		fmt.Sprintf("remittances: %d (%d created after the kill, %d creation retries) moved by the gateways' workers: %d SETTLED, %d RETURNED, %d REJECTED, each transition once; %d transitions after the kill",
			len(ld.remits), wf.Created, remitRetries, rf.settled, rf.returned, rf.rejected, wf.RemitSteps),
		fmt.Sprintf("holds: %d authorized before the kill, %d approved, %d expired by the gateways' workers (%d after the kill), each released once",
			len(ld.holds), hf.approved, hf.expired, wf.Expired),
		cbNote,
		fmt.Sprintf("%s's keeper restarted → secondary %s; → its journal equal to the primary's %s; load %s",
			victim.Name, rejoin.Round(time.Millisecond), catchUp.Round(time.Millisecond), loadDone.Sub(start).Round(time.Second)))
	res.elapsed = time.Since(start)
	return res
}

// haFigures are the per-seed figures of a loss scenario (docs/ha.md).
type haFigures struct {
	acked, lost, doubled  int
	firstWrite            time.Duration // kill → first successful write
	rejoin                time.Duration // keeper restarted → secondary
	catchUp               time.Duration // keeper restarted → journal equal to the primary's
	slowest               time.Duration // slowest successful attempt after the kill
	unavailable           int           // 503 answers after the kill
	restore               time.Duration // restore scenario: restore + recovery
	restoredWant, restGot int
	singleCopy            time.Duration // commits acknowledged with one copy only (ha_copies.go)
	copiesMeasured        bool
}
