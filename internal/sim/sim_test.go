package sim

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgtest"
	"github.com/paygate/gateway/postings"
)

var (
	flagSeed     = flag.Int64("sim.seed", 0, "seed of the simulation; 0 draws one (SIM_SEED)")
	flagSteps    = flag.Int("sim.steps", 0, "run exactly this many steps; 0 runs for -sim.duration (SIM_STEPS)")
	flagDuration = flag.Duration("sim.duration", 0, "how long to generate steps; default 12s (SIM_DURATION)")
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// Fault kinds injected around a step.
const (
	faultNone      = "none"
	faultLost      = "lost answer"     // the answer is dropped; the caller retries with the same key
	faultUnknown   = "outcome unknown" // the caller gives up while the writer commits
	faultSlow      = "slow database"   // a concurrent transaction holds the journal head
	faultCancelled = "cancelled"       // the caller's context ends before the call
)

type sim struct {
	t     *testing.T
	seed  int64
	rng   *mrand.Rand
	l     *gatewaytest.Gateway
	db    *bun.DB
	md    *model
	keyNo int

	clockMu sync.Mutex
	clock   time.Time

	step    int
	curOp   string
	curMode string
	queue   []*netMsg
	answers map[string]string // answerKey → the first answer, encoded
	stats   map[string]int
	dis     *disabling     // the disabled merchants' /shop (disabled_test.go)
	cps     simCheckpoints // the run's signed checkpoints (checkpoints_test.go)
	closes  simCloses      // the run's period closes (closes_test.go)
}

func envInt(name string) int64 {
	v, _ := strconv.ParseInt(os.Getenv(name), 10, 64)
	return v
}

func TestSimulation(t *testing.T) {
	seed := *flagSeed
	if seed == 0 {
		seed = envInt("SIM_SEED")
	}
	if seed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		seed = int64(uint64(b[0])<<48|uint64(b[1])<<40|uint64(b[2])<<32|uint64(b[3])<<24|uint64(b[4])<<16|uint64(b[5])<<8|uint64(b[6])) + 1
	}
	steps := *flagSteps
	if steps == 0 {
		steps = int(envInt("SIM_STEPS"))
	}
	budget := *flagDuration
	if budget == 0 {
		if d, err := time.ParseDuration(os.Getenv("SIM_DURATION")); err == nil {
			budget = d
		}
	}
	if budget == 0 {
		budget = 12 * time.Second
	}
	t.Logf("simulation seed %d (reproduce: go test ./internal/sim -run TestSimulation -sim.seed=%d)", seed, seed)

	s := &sim{t: t, seed: seed, rng: mrand.New(mrand.NewPCG(uint64(seed), uint64(seed)^0x9e3779b97f4a7c15)),
		answers: map[string]string{}, stats: map[string]int{},
		// The ledger clock starts at the real time: idempotency keys
		// expire by the database's clock (expires_at > now()), so a ledger
		// clock behind it would expire them early.
		clock: time.Now().UTC().Truncate(time.Second)}
	s.db = pgtest.NewDB(t)
	key := make([]byte, merchant.DataKeyBytes)
	_, _ = rand.Read(key)
	sealer, err := merchant.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	const holdExpiry = 3 * time.Hour
	s.md = newModel(holdExpiry)
	s.l = gatewaytest.New(t, s.db, gatewaytest.Options{Sealer: sealer, Ledger: ledger.Config{Now: s.nowUTC, Shards: 4},
		Network: network.Config{HoldExpiry: holdExpiry, Bounds: simNetworkBounds}})
	s.setup()

	start := time.Now()
	for s.step = 1; ; s.step++ {
		if steps > 0 && s.step > steps {
			break
		}
		if steps == 0 && time.Since(start) > budget {
			break
		}
		s.runStep()
	}
	// Deliver whatever the network still holds, then audit everything.
	for len(s.queue) > 0 {
		s.step++
		s.deliver(false)
	}
	s.fullCheck()
	s.verify()
	s.checkpointTeeth()
	s.closesTeeth()
	s.checkPosition() // position_test.go
	names := make([]string, 0, len(s.stats))
	for k := range s.stats {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, k := range names {
		fmt.Fprintf(&b, " %s=%d", k, s.stats[k])
	}
	t.Logf("seed %d: %d steps in %s;%s", seed, s.step-1, time.Since(start).Round(time.Millisecond), b.String())
}

// fail stops the test with the seed and the step that reproduce it.
func (s *sim) fail(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("seed %d, step %d (%s, fault %s): %s\nreproduce: go test ./internal/sim -run TestSimulation -sim.seed=%d -sim.steps=%d",
		s.seed, s.step, s.curOp, s.curMode, fmt.Sprintf(format, args...), s.seed, s.step)
}

func (s *sim) nowUTC() time.Time {
	s.clockMu.Lock()
	defer s.clockMu.Unlock()
	return s.clock
}

func (s *sim) advance(d time.Duration) {
	s.clockMu.Lock()
	defer s.clockMu.Unlock()
	s.clock = s.clock.Add(d)
}

func (s *sim) chance(percent int) bool { return s.rng.IntN(100) < percent }

// between draws from [lo, hi].
func (s *sim) between(lo, hi int64) int64 {
	if lo < 1 {
		lo = 1
	}
	if hi <= lo {
		return lo
	}
	return lo + s.rng.Int64N(hi-lo+1)
}

func (s *sim) newKey(prefix string) string {
	s.keyNo++
	return fmt.Sprintf("%s-%d-%d", prefix, s.seed, s.keyNo)
}

func (s *sim) setup() {
	ctx := context.Background()
	for i, cur := range []string{"USD", "USD", "EUR"} {
		m, creds, err := s.l.CreateMerchant(ctx, merchant.Spec{Name: fmt.Sprintf("Sim shop %d", i+1), Currencies: []string{cur}})
		if err != nil {
			s.fail("CreateMerchant: %v", err)
		}
		other := "EUR"
		if cur == "EUR" {
			other = "USD"
		}
		// A card balance limit low enough to be reached; no daily issue
		// limit (the injected clock would make its day boundary noise).
		if err := s.l.Cards.SetLimit(ctx, m.ID, cur, 5_000_00, 1_000_000_000_00); err != nil {
			s.fail("SetLimit: %v", err)
		}
		p, err := s.l.Cards.Profile(ctx, m.ID)
		if err != nil {
			s.fail("Profile: %v", err)
		}
		mm := &mMerchant{id: m.ID, cur: cur, other: other, creds: creds}
		for _, lim := range p.Limits {
			if lim.Currency == cur {
				mm.lim = lim
			}
		}
		bins, err := s.l.Cards.MerchantBINs(ctx, m.ID)
		if err != nil {
			s.fail("MerchantBINs: %v", err)
		}
		for _, b := range bins {
			if b.Currency == cur {
				mm.bin = b.Bin
				break
			}
		}
		if mm.bin == "" || mm.lim.CardBalanceMax != 5_000_00 || mm.lim.RemittanceMax <= 0 {
			s.fail("merchant %d: bin %q limits %+v", m.ID, mm.bin, mm.lim)
		}
		s.md.merchants = append(s.md.merchants, mm)
	}
	for _, m := range s.md.merchants {
		s.exec(s.opDeposit(m), faultNone)
	}
	s.setRates()
	s.closeFirstDay() // closes_test.go
}

// runStep draws one step from the seed and runs it.
func (s *sim) runStep() {
	m := s.md.merchants[s.rng.IntN(len(s.md.merchants))]
	if s.disabledStep(m) { // disabled_test.go
		return
	}
	live := 0
	for _, c := range m.cards {
		if c.status != cards.CardCancelled {
			live++
		}
	}
	r := s.rng.IntN(100)
	switch {
	case r < 6 || s.md.get(fundOf(m)) < 1_000_00:
		s.depositStep(m) // with a bank reference, now and then reversed (finance_test.go)
	case r < 14 || live < 2:
		if len(m.cards) >= 40 {
			s.exec(s.opDeposit(m), s.pickFault())
			return
		}
		s.exec(s.opCreateCard(m), s.pickFault())
	case r < 32:
		s.exec(s.opTransfer(m), s.pickFault())
	case r < 37:
		s.exec(s.opFreeze(m, s.chance(55)), s.pickFault())
	case r < 39:
		s.exec(s.opCancel(m), s.pickFault())
	case r < 52:
		// The network emits one to three messages.
		for i := s.rng.IntN(3); i >= 0; i-- {
			if msg, ok := s.newNetMsg(); ok {
				s.queue = append(s.queue, msg)
			}
		}
		s.stats["net emitted"]++
	case r < 72:
		s.deliver(true)
	case r < 74:
		if o := s.opConflict(m); o != nil {
			s.exec(o, s.pickFault())
		}
	case r < 80:
		s.exec(s.opRemit(m), s.pickFault())
	case r < 88:
		if len(m.remits) > 0 {
			s.exec(s.opTransition(m), s.pickFault())
		}
	case r < 92:
		if msg, ok := s.newRailMsg(); ok {
			s.queue = append(s.queue, msg)
		}
	case r < 96:
		d := time.Duration(s.between(1, 150)) * time.Minute
		s.advance(d)
		s.closeEnded() // at once: a day the clock left behind holds every entry so far
		s.refreshRatesIfOld()
		s.stats["clock ticks"]++
	default:
		mode := faultNone
		if s.chance(20) {
			mode = faultSlow
		}
		s.exec(s.opExpire(), mode)
	}
	if s.step%25 == 0 {
		s.fullCheck()
	}
	if s.step%150 == 0 {
		s.verify()
	}
}

// deliver hands a random waiting message to the ledger: the network
// reorders its messages and, sometimes, delivers one twice.
func (s *sim) deliver(duplicates bool) {
	if len(s.queue) == 0 {
		return
	}
	i := s.rng.IntN(len(s.queue))
	msg := s.queue[i]
	if !msg.firstAt.IsZero() && s.nowUTC().Sub(msg.firstAt) >= netKeyFreshMax {
		s.queue = append(s.queue[:i], s.queue[i+1:]...)
		s.stats["net duplicate dropped (too old)"]++
		return
	}
	if msg.firstAt.IsZero() {
		msg.firstAt = s.nowUTC()
	}
	if duplicates && s.chance(25) {
		s.stats["net duplicated"]++ // stays queued: delivered again later
	} else {
		s.queue = append(s.queue[:i], s.queue[i+1:]...)
	}
	fault := faultNone
	if duplicates {
		fault = s.pickFault()
	}
	s.exec(s.opNetwork(msg), fault)
}

func (s *sim) pickFault() string {
	switch r := s.rng.IntN(100); {
	case r < 12:
		return faultLost
	case r < 24:
		return faultUnknown
	case r < 34:
		return faultSlow
	case r < 42:
		return faultCancelled
	}
	return faultNone
}

// exec runs op under a fault and checks the outcome and the state after.
func (s *sim) exec(o *op, fault string) {
	s.t.Helper()
	if o.m == nil && fault != faultSlow {
		fault = faultNone
	}
	s.curOp, s.curMode = o.name, fault
	s.stats["op "+o.name]++
	s.stats["fault "+fault]++
	ctx := context.Background()
	switch fault {
	case faultNone:
		res, err := o.call(ctx)
		s.settle(o, res, err)
	case faultLost:
		res, err := o.call(ctx)
		s.settle(o, res, err)
		// The answer never reached the caller, who retries: the same key
		// must give the same answer and change nothing.
		res, err = o.call(ctx)
		s.settle(o, res, err)
	case faultCancelled:
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		res, err := o.call(cctx)
		if err == nil {
			s.settle(o, res, err) // it ran after all: that is its answer
			s.checkClosesAfterFault(o, fault)
			return
		}
		res, err = o.call(ctx)
		s.settle(o, res, err)
	case faultSlow:
		s.withHeldHead(o, func() {
			time.Sleep(time.Duration(s.between(5, 120)) * time.Millisecond)
		}, nil)
	case faultUnknown:
		s.withHeldHead(o, nil, func(cancel context.CancelFunc, done <-chan callResult) {
			// The caller gives up while the writer waits for the head, then
			// commits: the caller learns nothing but "outcome unknown".
			cancel()
			select {
			case r := <-done:
				pe := postings.AsError(r.err)
				if r.err == nil || pe.Code != postings.EUNAVAILABLE || pe.Reason != postings.ReasonOutcomeUnknown {
					s.fail("abandoned call answered %v / %v, want unavailable/outcome_unknown", r.res, r.err)
				}
			case <-time.After(simWait):
				s.fail("an abandoned call was not answered within %v", simWait)
			}
		})
	}
	s.checkAfter(o)
	s.checkClosesAfterFault(o, fault) // closes_test.go
}

// simWait bounds each wait for something that must happen (a call
// answered, the writer blocked on a lock, a key's transaction committed).
// None of them is what the simulation measures, so the bound is for a hung
// call only: long enough for a loaded 2-core machine running every package.
const simWait = time.Minute

type callResult struct {
	res any
	err error
}

// withHeldHead runs o while another transaction holds the journal head of
// o's merchant (of every merchant for an op without one). Once the writer
// waits on that lock, during() runs (slow database) or
// abandon(cancel, done) runs (outcome unknown); then the lock is released,
// the writer commits, and the authoritative answer is settled: the call's
// own for a slow database, a retry with the same key for an abandoned one.
func (s *sim) withHeldHead(o *op, during func(), abandon func(context.CancelFunc, <-chan callResult)) {
	ctx := context.Background()
	conn, err := s.db.DB.Conn(ctx)
	if err != nil {
		s.fail("lock connection: %v", err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		s.fail("lock transaction: %v", err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			if err := tx.Rollback(); err != nil {
				s.fail("releasing the head lock: %v", err)
			}
		}
	}
	defer release()
	var ids []int64
	if o.m != nil {
		ids = []int64{o.m.id}
	} else {
		for _, m := range s.md.merchants {
			ids = append(ids, m.id)
		}
	}
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `select 1 from ledger_heads where merchant_id = $1 for update`, id); err != nil {
			s.fail("locking the head of %d: %v", id, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan callResult, 1)
	go func() {
		res, err := o.call(cctx)
		done <- callResult{res, err}
	}()
	blocked, early := s.waitBlocked(done)
	if !blocked {
		// The call ended before the writer took the lock (a refusal before
		// the writer): that is its answer.
		release()
		s.settle(o, early.res, early.err)
		return
	}
	s.stats["writer blocked"]++
	if abandon != nil {
		abandon(cancel, done)
		release()
		// The abandoned transaction commits once the lock is released;
		// until then its key is in progress. Wait for that as long as a
		// loaded machine needs, not for a fixed number of tries.
		res, err := o.call(ctx)
		for deadline := time.Now().Add(simWait); err != nil && retryable(err) && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
			res, err = o.call(ctx)
		}
		s.settle(o, res, err)
		return
	}
	during()
	release()
	select {
	case r := <-done:
		s.settle(o, r.res, r.err)
	case <-time.After(simWait):
		s.fail("a call slowed by a held lock did not finish within %v of its release", simWait)
	}
}

// waitBlocked waits until a session of this database waits on a lock
// (true), or the call ends first (false, with its result).
func (s *sim) waitBlocked(done <-chan callResult) (bool, callResult) {
	deadline := time.Now().Add(simWait)
	for time.Now().Before(deadline) {
		select {
		case r := <-done:
			return false, r
		default:
		}
		var n int
		err := s.db.NewRaw(`select count(*) from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`).
			Scan(context.Background(), &n)
		if err != nil {
			s.fail("pg_stat_activity: %v", err)
		}
		if n > 0 {
			return true, callResult{}
		}
		time.Sleep(time.Millisecond)
	}
	s.fail("the writer never waited on the held journal head")
	return false, callResult{}
}

func retryable(err error) bool {
	switch postings.AsError(err).Code {
	case postings.EUNAVAILABLE, postings.EINPROGRESS:
		return true
	}
	return postings.AsError(err).Reason == postings.ReasonIdempotencyRace
}

// settle checks an authoritative answer: a replay against the first answer
// under its key, a first answer against the model (which it then updates).
func (s *sim) settle(o *op, res any, err error) {
	s.t.Helper()
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || retryable(err)) {
		s.fail("%s: unexpected transient failure %v", o.name, err)
	}
	ans := encodeAnswer(res, err)
	if o.key != "" && !o.noStore {
		if first, ok := s.answers[o.key]; ok {
			s.stats["replays checked"]++
			if first != ans {
				s.fail("%s: a replay answered\n  %s (%v)\nbut the first answer was\n  %s", o.name, ans, err, first)
			}
			return
		}
	}
	if e := o.expect(res, err); e != nil {
		s.fail("%s: %v", o.name, e)
	}
	if o.key != "" && !o.noStore {
		s.answers[o.key] = ans
	}
}
