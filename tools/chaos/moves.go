package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/tools/internal/harness"
)

// The move scenarios (issue 33 point 5, docs/ha.md "Chaos", docs/scaling.md
// "Moving a merchant between cells"): the two cells of the cells scenario
// (cells.go), one gateway over both with GATEWAY_CELLS, callbacks to a
// receiver in this process, and load on every merchant of both cells —
// shop operations with Idempotency-Keys, and on the moving merchant's
// cards network authorizations each cleared or reversed at once
// (moves_load.go). Under that load a merchant of a1 moves to b2 with
// `gateway cells move --to b2`:
//   - move: the move runs to its end;
//   - move killed: the `gateway cells move` process gets SIGKILL in the
//     middle of the move (after the copy: the merchant paused and fenced,
//     or verified, or switched; killMoveMidway), the merchant stays
//     paused a while under the load, then the command runs again and
//     resumes it; in a second run on another merchant a move killed
//     before it verified is rolled back with --rollback instead.
// Then (moveChecks): nothing acknowledged lost or doubled, in the cell the
// merchant is in now (checkShopOps, countAcked); every answered request
// sent again with its key or message id answers the same; the moving
// merchant's attempts were 2xx or 503 with Retry-After, its authorizations
// approved or declined 91; every other merchant's attempts 2xx; the move
// never half-done (placement); an event of the merchant created after the
// move delivered to the receiver; audit verify over both cells; the pause
// measured, by the mover and as the merchant's clients saw it.

const (
	moveFault         = "merchant moved under load"
	moveKillFault     = "mover killed mid-move, resumed"
	moveRollbackFault = "mover killed mid-move, rolled back"
	moveServeFault    = "serving gateway killed mid-move"
)

// moveMode is how a scenario's move goes.
type moveMode int

const (
	movePlain moveMode = iota
	moveKillResume
	moveKillRollback
	moveKillServe // the serving gateway killed and restarted mid-move, the mover going on
)

// movesOptions: clients of the other merchants (the moving one gets half
// as many), the bound of operations per side, of holds.
type movesOptions struct {
	clients, ops, holds int
}

// moveStack is what the move scenarios share: the cells, the gateway, the
// receiver, where each merchant is now and every operation sent to it so
// far (its balances are the sum of all of them).
type moveStack struct {
	cs     []*cellStack
	spec   string
	gw     *harness.Gateway
	rcv    *callbackReceiver
	cellOf map[*merchant]*cellStack
	allOps map[*merchant][]*shopOp
}

func runMoveScenarios(ctx context.Context, e *env, seed uint64, want map[string]bool, o movesOptions, report func(*result)) {
	start := time.Now()
	setupFail := func(format string, args ...any) {
		r := &result{fault: moveFault, seed: seed, injected: "setup", reproduce: moveReproduce(seed, o)}
		r.violations = append(r.violations, fmt.Sprintf(format, args...))
		r.elapsed = time.Since(start)
		report(r)
	}
	rcv, err := newCallbackReceiver(0)
	if err != nil {
		setupFail("receiver: %v", err)
		return
	}
	defer rcv.close()
	cs, closeCells, err := e.startCells(ctx, "moves-cell-", rcv.url)
	defer closeCells()
	if err != nil {
		setupFail("setup: %v", err)
		return
	}
	st := &moveStack{cs: cs, rcv: rcv, cellOf: map[*merchant]*cellStack{}, allOps: map[*merchant][]*shopOp{}}
	for _, c := range cs {
		for _, m := range c.ms {
			st.cellOf[m] = c
			rcv.addKey(m.shopNo, m.priv)
		}
	}
	// The merchants that move get cards for the network's messages.
	for _, m := range append(append([]*merchant{}, cs[0].ms...), cs[1].ms[0]) {
		for j := 0; j < 6; j++ {
			c, err := st.cellOf[m].l.cards.CreateCard(ctx, m.id, cards.CreateCardInput{Bin: m.bin, Currency: m.cur, Amount: 5_000_00, Remark: "chaos network"}, nil)
			if err != nil {
				setupFail("network card: %v", err)
				return
			}
			m.netCards = append(m.netCards, &card{no: c.CardNo, m: m, initial: 5_000_00})
			m.setupFunding += 5_000_00
		}
	}
	st.spec = "GATEWAY_CELLS=a1=" + cs[0].url + ",b2=" + cs[1].url
	if st.gw, err = e.startGateway(ctx, "moves", "", "DATABASE_URL=", st.spec); err != nil {
		setupFail("%v", err)
		return
	}
	defer st.gw.Stop()
	rng := rand.New(rand.NewPCG(seed, 35))
	// Three of a1's merchants move to b2; then one of b2's to a1 while the
	// serving gateway is killed and restarted (its start checks both
	// cells, each now holding a merchant of the other's id range).
	runs := []struct {
		name   string
		mode   moveMode
		moving *merchant
	}{{"move", movePlain, cs[0].ms[0]}, {"movekill", moveKillResume, cs[0].ms[1]}, {"movekill", moveKillRollback, cs[0].ms[2]},
		{"movekill", moveKillServe, cs[1].ms[0]}}
	for _, r := range runs {
		if !want[r.name] || ctx.Err() != nil {
			continue
		}
		e.logf("%s: seed %d: moving %s out of %s under load", r.name, seed, r.moving.shopNo, st.cellOf[r.moving].name)
		report(st.runMove(ctx, e, rng, seed, r.moving, r.mode, o))
	}
}

func moveReproduce(seed uint64, o movesOptions) string {
	return fmt.Sprintf("make chaos-cells CHAOS_ARGS='-seeds %d -ha-clients %d'", seed, 2*o.clients)
}

// runMove is one scenario: the load, the move (killed and run again, as
// mode says), the load a little past it, the checks.
func (st *moveStack) runMove(ctx context.Context, e *env, rng *rand.Rand, seed uint64, moving *merchant, mode moveMode, o movesOptions) *result {
	start := time.Now()
	a, b := st.cellOf[moving], st.cs[0] // the source, the target
	if b == a {
		b = st.cs[1]
	}
	res := &result{fault: []string{moveFault, moveKillFault, moveRollbackFault, moveServeFault}[mode], seed: seed, reproduce: moveReproduce(seed, o)}
	res.injected = map[moveMode]string{
		movePlain:        "gateway cells move a1 → b2 of a merchant under load on both cells",
		moveKillResume:   "SIGKILL of gateway cells move mid-move under load, then the move run again (resume)",
		moveKillRollback: "SIGKILL of gateway cells move mid-move under load, then cells move --rollback",
		moveKillServe:    "SIGKILL of gateway serve mid-move b2 → a1 under load, restarted; the move goes on",
	}[mode]
	add, fail := res.recorders(start)
	var others []*merchant
	for _, c := range st.cs {
		for _, m := range c.ms {
			if m != moving {
				others = append(others, m)
			}
		}
	}
	label := fmt.Sprintf("moves-%d-%d", seed, mode)
	// The load's own context: a move that failed leaves its merchant
	// moving, whose operations would be retried for minutes.
	lctx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	ld, err := startMoveLoad(lctx, rng, st.gw, moving, others, moveLoadOptions{label: label, clients: o.clients, ops: o.ops,
		holds: o.holds, callbackURL: st.rcv.url, gwKilled: mode == moveKillServe})
	if err != nil {
		return fail("the load: %v", err)
	}
	stopped := false
	defer func() {
		if !stopped {
			ld.finish()
		}
	}()
	// The move starts once the moving merchant's load is well under way.
	if !waitFor(ctx, time.Minute, func() bool { return ld.rMove.answered.Load() >= 40 }) {
		return fail("the moving merchant's load did not start: %d answered in a minute", ld.rMove.answered.Load())
	}
	t0 := time.Now()
	var mo moveOutput
	var killedIn, out string
	switch mode {
	case movePlain:
		mo, out, err = e.runMoveCommand(ctx, st.spec, moving.shopNo, b.name)
	case moveKillServe:
		mo, out, killedIn, err = st.moveKillingServe(ctx, e, a, moving.shopNo, b.name)
	default:
		if killedIn, err = e.killMoveMidway(ctx, st.spec, a.db, moving.shopNo, b.name); err != nil {
			return fail("killing the move: %v", err)
		}
		e.logf("%s: killed the move in state %s; the merchant stays so for 3 s under the load", res.fault, killedIn)
		time.Sleep(3 * time.Second) // the load runs against the half-moved merchant: the scenario's point, not a synchronisation
		if mode == moveKillRollback && stateIn(killedIn, []string{"copying", "paused"}) {
			mo, out, err = e.runMoveCommand(ctx, st.spec, moving.shopNo, b.name, "--rollback")
		} else {
			mo, out, err = e.runMoveCommand(ctx, st.spec, moving.shopNo, b.name)
			if err == nil && !mo.Resumed {
				add("the move run again after the kill in %s did not say it resumed: %s", killedIn, out)
			}
		}
	}
	moveTook := time.Since(t0)
	moveEnd := time.Now()
	moved := mode != moveKillRollback || !stateIn(killedIn, []string{"copying", "paused"})
	_ = out
	if err != nil {
		// The merchant is wherever the directory says now; its operations
		// count for the next runs' balances.
		stopLoad()
		ld.finish()
		stopped = true
		st.record(ld)
		// As an operator would: roll the move back, or else finish it, so
		// that the next runs do not find the merchant paused.
		if _, _, rerr := e.runMoveCommand(ctx, st.spec, moving.shopNo, b.name, "--rollback"); rerr != nil {
			_, _, _ = e.runMoveCommand(ctx, st.spec, moving.shopNo, b.name)
		}
		st.relocate(ctx, moving)
		return fail("%v", err)
	}
	// The load goes on past the move: the merchant's requests served in
	// its cell, and events made there.
	n := ld.rMove.answered.Load()
	if !waitFor(ctx, time.Minute, func() bool { return ld.rMove.answered.Load() >= n+40 }) {
		add("the moving merchant had %d operations answered in the minute after the move", ld.rMove.answered.Load()-n)
	}
	ld.finish()
	stopped = true
	if moved {
		st.cellOf[moving] = b
	}
	if mode == moveKillServe {
		res.restarts = 1
	}
	declined := st.moveChecks(ctx, e, ld, moving, moved, moveEnd, add)

	res.ops = len(ld.opsMove) + len(ld.opsOther) + len(ld.holds)
	if mode != movePlain {
		res.kills = 1
	}
	res.countAttempts(ld.rMove, ld.opsMove)
	res.countAttempts(ld.rOther, ld.opsOther)
	res.attempts = ld.rMove.attempts.Load() + ld.rOther.attempts.Load()
	ld.watch.mu.Lock()
	unavailable, ok := ld.watch.unavailable, ld.watch.ok
	ld.watch.mu.Unlock()
	what := "moved to " + b.name
	if !moved {
		what = "rolled back, in " + a.name
	}
	switch {
	case mode == moveKillServe:
		what = "the serving gateway killed in state " + killedIn + " and restarted, " + what
	case killedIn != "":
		what = "killed in state " + killedIn + ", then " + what
	}
	res.notes = append(res.notes,
		fmt.Sprintf("%s %s; the command(s) took %s; mover: pause %d ms (tail %d ms, verify %d ms), %d rows copied, copy %d ms, removal %d ms, resumed %v",
			moving.shopNo, what, moveTook.Round(time.Millisecond), mo.PauseMs, mo.TailMs, mo.VerifyMs, mo.Rows, mo.CopyMs, mo.RemoveMs, mo.Resumed),
		fmt.Sprintf("the moving merchant: %d operations, %d attempts answered 2xx, %d answered 503 with Retry-After over %s (the pause as its clients saw it), %d unanswered; %d authorizations (%d declined 91)",
			len(ld.opsMove), ok, unavailable, ld.watch.seen().Round(time.Millisecond), ld.watch.lost, len(ld.holds), declined),
		fmt.Sprintf("the other %d merchants: %d operations, %d attempts, %d without a 2xx answer%s",
			len(others), len(ld.opsOther), ld.rOther.attempts.Load(), ld.others.figures().errors, killedNote(ld.othersKilled)))
	res.elapsed = time.Since(start)
	return res
}

// waitFor polls cond every 50 ms until it holds (true) or limit passes.
func waitFor(ctx context.Context, limit time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
	}
	return true
}

// moveChecks are the checks after one move scenario (see the top of this
// file).
func (st *moveStack) moveChecks(ctx context.Context, e *env, ld *moveLoad, moving *merchant, moved bool, moveEnd time.Time,
	add func(string, ...any)) (declined91 int) {
	if ld.watch.bad > 0 {
		add("the moving merchant got %d attempts answered neither 2xx nor 503 with Retry-After (first: %s)", ld.watch.bad, ld.watch.firstBad)
	}
	if ld.watch.unavailable == 0 {
		add("the moving merchant never got a 503: its pause was not seen")
	}
	if f := ld.others.figures(); f.errors > 0 && ld.othersKilled == nil {
		add("the other merchants got %d attempts without a 2xx answer (first: %s); want none", f.errors, f.firstError)
	}
	if w := ld.othersKilled; w != nil && w.bad > 0 {
		add("the other merchants got %d attempts answered neither 2xx, nor 503 with Retry-After, nor unanswered while the gateway was down (first: %s)", w.bad, w.firstBad)
	}
	declined91 = ld.checkAuthorizations(add)
	if n := ld.rMove.status500.Load() + ld.rOther.status500.Load(); n > 0 {
		add("%d answers were HTTP 500 internal error", n)
	}
	// Nothing lost or doubled, each merchant in the cell it is in now,
	// over every operation sent to it in every scenario so far.
	st.record(ld)
	for _, c := range st.cs {
		var ms []*merchant
		var ops, now []*shopOp
		for m, in := range st.cellOf {
			if in == c {
				ms = append(ms, m)
				ops = append(ops, st.allOps[m]...)
			}
		}
		for _, o := range append(append([]*shopOp{}, ld.opsMove...), ld.opsOther...) {
			if st.cellOf[o.m] == c {
				now = append(now, o)
			}
		}
		v, _ := checkShopOps(ctx, c.db, c.l, ms, ops, nil)
		for _, s := range v {
			add("cell %s: %s", c.name, s)
		}
		acks, err := countAcked(ctx, c.db, now, nil)
		if err != nil {
			add("cell %s: counting acknowledged operations: %v", c.name, err)
		} else if acks.lost > 0 || acks.doubled > 0 {
			add("cell %s: of %d acknowledged operations %d lost, %d doubled", c.name, acks.acked, acks.lost, acks.doubled)
		}
	}
	in := st.cellOf[moving]
	hv, _ := checkHolds(ctx, in.db, in.l, []*merchant{moving}, ld.holds)
	for _, s := range hv {
		add("cell %s: %s", in.name, s)
	}
	// Replays: the same key, or message id, the same answer.
	rng := rand.New(rand.NewPCG(uint64(moveEnd.UnixNano()), 5))
	for _, s := range ld.rMove.replayAll(ctx, rng, ld.opsMove, 4) {
		add("moving merchant: %s", s)
	}
	for _, s := range ld.rOther.replayAll(ctx, rng, ld.opsOther, 8) {
		add("%s", s)
	}
	ld.replayHolds(ctx, add)
	// Never half-done.
	out := st.cs[0]
	if in == out {
		out = st.cs[1]
	}
	(&placement{dir: st.cs[0].db, in: in, out: out, m: moving, moved: moved}).check(ctx, add)
	// Callbacks continue: every delivery of both cells made, and the
	// merchant's events made after the move received.
	for _, c := range st.cs {
		waitNone(ctx, c.db, add, callbacksPending, 90*time.Second)
	}
	var events []string
	if err := in.db.NewRaw("select event_id from events where merchant_id = ? and created_at > ?", moving.id, moveEnd).Scan(ctx, &events); err != nil {
		add("the events of %s after the move: %v", moving.shopNo, err)
	}
	missing := st.rcv.missing(events)
	if len(events) == 0 {
		add("%s has no event made after the move in %s: callbacks after the move not tested", moving.shopNo, in.name)
	} else if len(missing) > 0 {
		add("%d of %s's %d events made after the move were not delivered (first: %s)", len(missing), moving.shopNo, len(events), missing[0])
	}
	if ok, text := e.auditVerifyCells(ctx, st.spec); !ok {
		add("gateway audit verify over the cells: %s", text)
	}
	if alive, _ := st.gw.Alive(); !alive {
		add("the gateway died: %s", tailFile(st.gw.LogPath(), 5))
	}
	return declined91
}

// killedNote is what the other merchants saw while the serving gateway
// was down, when it was killed ("" otherwise).
func killedNote(w *pauseWatch) string {
	if w == nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprintf(" (the gateway killed: %d answered 2xx, %d 503 with Retry-After, %d unanswered, %d otherwise)", w.ok, w.unavailable, w.lost, w.bad)
}

// record adds the run's operations to every merchant's.
func (st *moveStack) record(ld *moveLoad) {
	for _, o := range append(append([]*shopOp{}, ld.opsMove...), ld.opsOther...) {
		st.allOps[o.m] = append(st.allOps[o.m], o)
	}
}

// relocate places m in the cell the directory names, after a move that
// failed.
func (st *moveStack) relocate(ctx context.Context, m *merchant) {
	var cell string
	_ = st.cs[0].db.NewRaw("select cell from cell_directory where shop_no = ?", m.shopNo).Scan(ctx, &cell)
	for _, c := range st.cs {
		if c.name == cell {
			st.cellOf[m] = c
		}
	}
}

// missing are the event ids of ids the receiver has not seen.
func (r *callbackReceiver) missing(ids []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, id := range ids {
		if r.byEvent[id] == 0 {
			out = append(out, id)
		}
	}
	return out
}
