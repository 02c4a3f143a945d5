package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/tools/internal/harness"
)

type multiOptions struct {
	instances, ops, clients, auths, remits int
}

// A hold and the messages planned for it. The plan never captures more
// than the hold minus a planned partial reversal, so that whatever order the
// gateways apply the messages in, captured + released ≤ amount + fee.
type holdPlan struct {
	card      *card
	amount    int64
	authMsg   string
	targets   [2]int
	dupAuth   bool
	delay     time.Duration // resolution messages wait this long (some race the expiry)
	msgs      []*holdMsg
	authID    string
	approved  bool
	authAns   netAnswer
	violation []string
}

type holdMsg struct {
	kind    string // clear, reverse
	id      string
	amount  int64 // reverse: 0 is the whole hold
	target  int
	dup     int // another gateway sent the same message at once; -1 none
	answers []netAnswer
}

// runMulti runs several gateways with their workers on one database under
// load: shop operations spread over them (some sent to two at once), card
// network messages racing each other and the expiry workers, remittances
// moved by every gateway's lifecycle worker, and callbacks delivered by
// every gateway's dispatcher to a receiver that counts them.
func runMulti(ctx context.Context, e *env, seed uint64, o multiOptions) *result {
	start := time.Now()
	res := &result{fault: fmt.Sprintf("%d instances", o.instances), seed: seed,
		injected: fmt.Sprintf("%d gateway serve processes (workers on) on one database; shop requests spread over them, 10%% sent to two at once", o.instances),
		reproduce: fmt.Sprintf("make chaos CHAOS_ARGS='-only multi -seeds %d -instances %d -ops %d -auths %d -remittances %d'",
			seed, o.instances, o.ops, o.auths, o.remits)}
	add, fail := res.recorders(start)
	rng := rand.New(rand.NewPCG(seed, 3))
	url, db, l, err := e.newLedgerDB(ctx, fmt.Sprintf("chaos_multi_%d", seed), 16, ledger.Config{Shards: 4}, 4*time.Second)
	if err != nil {
		return fail("%v", err)
	}
	defer db.Close()
	defer l.Close()
	rcv, err := newCallbackReceiver(20 * time.Millisecond)
	if err != nil {
		return fail("receiver: %v", err)
	}
	defer rcv.close()
	ms, err := setupMerchants(ctx, l, 3, 8, 500_00, rcv.url)
	if err != nil {
		return fail("setup: %v", err)
	}
	for _, m := range ms {
		rcv.addKey(m.shopNo, m.priv)
		for j := 0; j < 6; j++ {
			c, err := l.cards.CreateCard(ctx, m.id, cards.CreateCardInput{Bin: m.bin, Currency: m.cur, Amount: 5_000_00, Remark: "chaos network"}, nil)
			if err != nil {
				return fail("network card: %v", err)
			}
			m.netCards = append(m.netCards, &card{no: c.CardNo, m: m, initial: 5_000_00})
			m.setupFunding += 5_000_00
		}
	}
	const sanctioned = "Ivan Chaosovich Sanctionov"
	if _, err := l.remit.ReplaceSanctions(ctx, []remittance.SanctionsEntry{{Name: sanctioned, Country: "DE", List: "CHAOS", Ref: "C-1"}}); err != nil {
		return fail("sanctions: %v", err)
	}

	var gws []*harness.Gateway
	for i := 0; i < o.instances; i++ {
		g, err := e.newGateway(fmt.Sprintf("multi-%d-%d", seed, i+1), url,
			"GATEWAY_REMIT_SCREENING_DELAY=300ms", "GATEWAY_REMIT_IN_FLIGHT=700ms", "GATEWAY_HOLD_EXPIRY=4s")
		if err != nil {
			return fail("gateway: %v", err)
		}
		gws = append(gws, g)
	}
	var startErr error
	var swg sync.WaitGroup
	var smu sync.Mutex
	for _, g := range gws {
		swg.Add(1)
		go func(g *harness.Gateway) {
			defer swg.Done()
			if err := g.Start(ctx); err != nil {
				smu.Lock()
				startErr = err
				smu.Unlock()
			}
		}(g)
	}
	swg.Wait()
	defer func() {
		for _, g := range gws {
			g.Stop()
		}
	}()
	if startErr != nil {
		return fail("starting the gateways: %v", startErr)
	}
	startedAt := time.Now()
	// The network side goes through the internal API when the gateways have
	// it, else through ledgers of this process.
	httpDriver, err := newHTTPNetDriver(gws)
	if err != nil {
		return fail("network client: %v", err)
	}
	var driver netDriver = httpDriver
	if !httpDriver.available(ctx) {
		var ls []*services
		for i := 0; i < 2; i++ {
			ldb, ll, err := e.openLedger(ctx, url, 8, ledger.Config{Shards: 4}, 4*time.Second)
			if err != nil {
				return fail("ledger: %v", err)
			}
			defer ldb.Close()
			defer ll.Close()
			ls = append(ls, ll)
		}
		driver = &ledgerNetDriver{ls: ls}
	}

	ops := planShopOps(rng, ms, planOptions{n: o.ops, createPercent: 15, freezePercent: 6, dupPercent: 10,
		callbackURL: rcv.url, keyPrefix: fmt.Sprintf("multi-%d", seed)})
	holds := planHolds(rng, ms, o.auths, o.instances, seed)
	remitPlan := planRemits(rng, ms, o.remits, sanctioned, rcv.url)

	// Two more ledgers of this process expire holds every 200 ms while the
	// load runs, racing the clearings and reversals the gateways apply;
	// afterwards the gateways' own expiry workers (every 30 s) take the rest.
	var expired atomic.Int64
	ectx, stopExpiry := context.WithCancel(ctx)
	var ewg sync.WaitGroup
	for i := 0; i < 2; i++ {
		ldb, ll, err := e.openLedger(ctx, url, 4, ledger.Config{Shards: 2}, 0)
		if err != nil {
			stopExpiry()
			return fail("expiry ledger: %v", err)
		}
		ewg.Add(1)
		go func() {
			defer ewg.Done()
			defer ldb.Close()
			defer ll.Close()
			for ectx.Err() == nil {
				n, _ := ll.network.ExpireHolds(ectx, network.ExpireBatchMax)
				expired.Add(int64(n))
				select {
				case <-ectx.Done():
				case <-time.After(200 * time.Millisecond):
				}
			}
		}()
	}

	r := newRunner(gws, o.clients)
	var lwg sync.WaitGroup
	lwg.Add(3)
	go func() { defer lwg.Done(); r.run(ctx, rng, ops, o.clients) }()
	hrng := rand.New(rand.NewPCG(seed, 4))
	go func() { defer lwg.Done(); runHolds(ctx, hrng, driver, holds, 48) }()
	var remitErr error
	go func() {
		defer lwg.Done()
		for _, p := range remitPlan {
			rm, err := l.remit.CreateRemittance(ctx, p.m.id, p.in, &ledger.Idempotency{Scope: ledger.ScopeShop, Key: p.key})
			if err != nil {
				remitErr = err
				return
			}
			p.tx = rm.TxID
			time.Sleep(25 * time.Millisecond)
		}
	}()
	lwg.Wait()
	loadDone := time.Now()
	// From now on only the gateways' own expiry workers release holds.
	stopExpiry()
	ewg.Wait()
	if remitErr != nil {
		add("creating a remittance: %v", remitErr)
	}

	// Let the workers finish: every remittance terminal, every hold closed
	// (the gateways' expiry workers run every 30 s), every callback sent.
	waitNone(ctx, db, add, remitsOpen, 90*time.Second)
	// One round of the gateways' expiry workers must have run after the
	// holds were made: they run at start and every 30 s.
	if d := 31*time.Second - time.Since(startedAt); d > 0 {
		time.Sleep(d)
	}
	waitNone(ctx, db, add, holdsOpen, 60*time.Second)
	waitNone(ctx, db, add, callbacksPending, 90*time.Second)
	noteRemitEffects(ctx, db, add, remitPlan)

	if n := r.status500.Load(); n > 0 {
		add("%d answers were HTTP 500 internal error", n)
	}
	v, facts := checkShopOps(ctx, db, l, ms, ops, nil)
	res.violations = append(res.violations, v...)
	res.violations = append(res.violations, r.replayAll(ctx, rng, ops, o.clients)...)
	hv, hf := checkHolds(ctx, db, l, ms, holds)
	res.violations = append(res.violations, hv...)
	rv, rf := checkRemits(ctx, db, remitPlan)
	res.violations = append(res.violations, rv...)

	// Callbacks: every delivery sent once, never two attempts at once.
	dl, err := countDeliveries(ctx, db)
	if err != nil {
		add("deliveries: %v", err)
	}
	rs := rcv.stats()
	switch {
	case rs.concurrent > 0:
		add("%d callback attempts arrived while another attempt of the same event was being received (sent twice at once)", rs.concurrent)
	case rs.twiceSameTS > 0:
		add("%d callbacks were received twice with the same (event_id, X-Timestamp)", rs.twiceSameTS)
	}
	if rs.redelivered > 0 {
		add("%d events were delivered more than once although every attempt was acknowledged", rs.redelivered)
	}
	dl.check(rs, add)
	for _, g := range gws {
		if alive, _ := g.Alive(); !alive {
			add("%s died: %s", g.Name(), tailFile(g.LogPath(), 5))
		}
	}
	if ok, out := e.auditVerify(ctx, url); !ok {
		add("gateway audit verify: %s", out)
	}
	res.ops = len(ops) + hf.messages + len(remitPlan)
	res.countAttempts(r, ops)
	res.retries += hf.retried
	res.notes = append(res.notes,
		fmt.Sprintf("shop: %d operations (%d succeeded, %d business failures), %d attempts, %d answered 1009 (a twin in progress on another gateway)",
			len(ops), facts.succeeded, facts.businessFailures, r.attempts.Load(), r.inProgress.Load()),
		fmt.Sprintf("network via %s: %d authorizations (%d approved), %d clear/reverse messages (%d sent to two gateways at once); "+
			"outcomes: %d cleared, %d reversed, %d expired (%d by this process's two expiry loops, %d by the gateways' workers)",
			driver.name(), len(holds), hf.approved, hf.messages-len(holds), hf.dups, hf.cleared, hf.reversed, hf.expired, expired.Load(),
			int64(hf.expired)-expired.Load()),
		fmt.Sprintf("remittances: %d moved by the gateways' workers: %d SETTLED, %d RETURNED, %d REJECTED; %d history rows",
			len(remitPlan), rf.settled, rf.returned, rf.rejected, rf.history),
		fmt.Sprintf("callbacks: %d deliveries received for %d events (%d in the database, %d with more than one attempt); "+
			"0 concurrent means no attempt was sent twice at once", rs.total, rs.events, dl.Delivered, dl.Multi),
		fmt.Sprintf("load %s, then %s for the workers to finish", loadDone.Sub(startedAt).Round(time.Millisecond), time.Since(loadDone).Round(time.Second)))
	res.elapsed = time.Since(start)
	return res
}

func planHolds(rng *rand.Rand, ms []*merchant, n, instances int, seed uint64) []*holdPlan {
	var out []*holdPlan
	msg := 0
	id := func() string { msg++; return fmt.Sprintf("chaos-%d-net-%d", seed, msg) }
	other := func(t int) int {
		if instances < 2 {
			return -1
		}
		return (t + 1 + rng.IntN(instances-1)) % instances
	}
	for i := 0; i < n; i++ {
		m := ms[rng.IntN(len(ms))]
		p := &holdPlan{card: m.netCards[rng.IntN(len(m.netCards))], amount: 1_00 + rng.Int64N(99_00), authMsg: id()}
		p.targets[0] = rng.IntN(instances)
		p.targets[1] = other(p.targets[0])
		p.dupAuth = rng.IntN(100) < 20
		if rng.IntN(100) < 30 {
			p.delay = time.Duration(3500+rng.IntN(1000)) * time.Millisecond // around the 4 s hold expiry
		}
		newMsg := func(kind string, amount int64) *holdMsg {
			t := rng.IntN(instances)
			h := &holdMsg{kind: kind, id: id(), amount: amount, target: t, dup: -1}
			if rng.IntN(100) < 20 {
				h.dup = other(t)
			}
			return h
		}
		switch r := rng.IntN(100); {
		case r < 30: // a clearing racing a full reversal
			p.msgs = append(p.msgs, newMsg("clear", 1+rng.Int64N(p.amount)), newMsg("reverse", 0))
		case r < 55: // a partial reversal, a clearing of the rest at most, a full reversal
			part := 1 + rng.Int64N(p.amount-1)
			p.msgs = append(p.msgs, newMsg("reverse", part), newMsg("clear", 1+rng.Int64N(p.amount-part)), newMsg("reverse", 0))
		case r < 75: // two clearings with different message ids: one must be refused
			p.msgs = append(p.msgs, newMsg("clear", 1+rng.Int64N(p.amount)), newMsg("clear", 1+rng.Int64N(p.amount)))
		default: // nothing: the expiry workers release it
		}
		out = append(out, p)
	}
	return out
}

// runHolds authorizes each planned hold, then fires its messages at once.
func runHolds(ctx context.Context, rng *rand.Rand, d netDriver, holds []*holdPlan, parallel int) {
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for _, p := range holds {
		p := p
		jitter := time.Duration(rng.IntN(5)) * time.Millisecond
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			time.Sleep(jitter)
			runHold(ctx, d, p)
		}()
	}
	wg.Wait()
}

func runHold(ctx context.Context, d netDriver, p *holdPlan) {
	req := network.AuthRequest{MessageID: p.authMsg, CardNo: p.card.no, Amount: p.amount, Currency: p.card.m.cur,
		MerchantName: "Chaos Store", MCC: "5999", MerchantCountry: "US"}
	targets := []int{p.targets[0]}
	if p.dupAuth && p.targets[1] >= 0 {
		targets = append(targets, p.targets[1])
	}
	answers := make([]netAnswer, len(targets))
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func(i, t int) {
			defer wg.Done()
			answers[i], _, errs[i] = sendUntilAnswered(ctx, func() (netAnswer, error) { return d.authorize(ctx, t, req) })
		}(i, t)
	}
	wg.Wait()
	for i := range targets {
		if errs[i] != nil {
			p.violation = append(p.violation, fmt.Sprintf("authorization %s: %v", p.authMsg, errs[i]))
			return
		}
		if answers[i].text() != answers[0].text() {
			p.violation = append(p.violation, fmt.Sprintf("authorization %s sent to two gateways: answers %s and %s",
				p.authMsg, answers[0].text(), answers[i].text()))
		}
	}
	p.authAns = answers[0]
	p.authID, p.approved = answers[0].authID, answers[0].approved
	if !p.approved || p.authID == "" {
		return
	}
	time.Sleep(p.delay)
	var mwg sync.WaitGroup
	for _, m := range p.msgs {
		sends := []int{m.target}
		if m.dup >= 0 {
			sends = append(sends, m.dup)
		}
		m.answers = make([]netAnswer, len(sends))
		for i, t := range sends {
			mwg.Add(1)
			go func(m *holdMsg, i, t int) {
				defer mwg.Done()
				var a netAnswer
				var err error
				if m.kind == "clear" {
					a, _, err = sendUntilAnswered(ctx, func() (netAnswer, error) {
						return d.clear(ctx, t, network.ClearRequest{MessageID: m.id, AuthID: p.authID, Amount: m.amount})
					})
				} else {
					a, _, err = sendUntilAnswered(ctx, func() (netAnswer, error) {
						return d.reverse(ctx, t, network.ReverseRequest{MessageID: m.id, AuthID: p.authID, Amount: m.amount})
					})
				}
				if err != nil {
					a = netAnswer{code: -1, status: err.Error()}
				}
				m.answers[i] = a
			}(m, i, t)
		}
	}
	mwg.Wait()
}

type holdFacts struct {
	approved, messages, dups, retried   int
	cleared, reversed, expired, stillOp int
}

// checkHolds: no hold resolved twice. Per authorization, the answers to one
// message agree wherever it was sent; at most one clearing succeeded;
// what successful messages released and captured never exceeds the hold;
// the row says captured + released ≤ amount + fee (equal once closed); the
// journal nets into the card's held account exactly what is still held,
// with one CARD_SETTLE per successful clearing and one REVERSAL per
// successful reversal. Card balances follow from the captures.
func checkHolds(ctx context.Context, db *bun.DB, l *services, ms []*merchant, holds []*holdPlan) ([]string, holdFacts) {
	var v []string
	var f holdFacts
	add := func(format string, args ...any) { v = append(v, fmt.Sprintf(format, args...)) }
	captured := map[string]int64{}
	type row struct {
		Status   string `bun:"status"`
		Amount   int64  `bun:"amount"`
		Fee      int64  `bun:"fee"`
		Held     int64  `bun:"held"`
		Captured int64  `bun:"captured"`
		Released int64  `bun:"released"`
	}
	type flow struct {
		AuthID   string `bun:"auth_id"`
		Net      int64  `bun:"net"`
		Settles  int    `bun:"settles"`
		Reverses int    `bun:"reverses"`
	}
	var flows []flow
	if err := db.NewRaw(holdFlowsSQL).Scan(ctx, &flows); err != nil {
		add("hold flows: %v", err)
	}
	byAuth := map[string]flow{}
	for _, fl := range flows {
		byAuth[fl.AuthID] = fl
	}
	for _, p := range holds {
		f.messages++
		v = append(v, p.violation...)
		if p.dupAuth {
			f.dups++
		}
		if !p.approved {
			continue
		}
		f.approved++
		var okClears, okReverses int
		var moved int64
		for _, m := range p.msgs {
			f.messages++
			if len(m.answers) > 1 {
				f.dups++
				if m.answers[0].text() != m.answers[1].text() {
					add("hold %s: message %s sent to two gateways answered %s and %s", p.authID, m.id, m.answers[0].text(), m.answers[1].text())
				}
			}
			a := m.answers[0]
			switch {
			case a.code == -1:
				add("hold %s: message %s: %s", p.authID, m.id, a.status)
			case a.code == 200 && m.kind == "clear":
				okClears++
				moved += a.captured + a.released
			case a.code == 200:
				okReverses++
				moved += a.released
			case a.code == 1202 || (a.code == 400 && m.kind == "reverse"):
				// closed, or a partial reversal above what is left: refused
			default:
				add("hold %s: message %s (%s) answered code %d", p.authID, m.id, m.kind, a.code)
			}
		}
		if okClears > 1 {
			add("hold %s was cleared %d times", p.authID, okClears)
		}
		var r row
		if err := db.NewRaw(`select status, amount, fee, held, captured, released from authorizations where auth_id = ?`, p.authID).Scan(ctx, &r); err != nil {
			add("authorization %s: %v", p.authID, err)
			continue
		}
		if moved > r.Amount+r.Fee {
			add("hold %s of %d: the successful messages moved %d", p.authID, r.Amount+r.Fee, moved)
		}
		if r.Captured+r.Released > r.Amount+r.Fee || (r.Status != network.AuthOpen && r.Captured+r.Released != r.Amount+r.Fee) {
			add("hold %s: captured %d + released %d vs amount+fee %d (status %s)", p.authID, r.Captured, r.Released, r.Amount+r.Fee, r.Status)
		}
		fl := byAuth[p.authID]
		if fl.Net != r.Held || fl.Settles != okClears || fl.Reverses != okReverses {
			add("hold %s: the journal nets %d into its hold (row: %d), %d CARD_SETTLE and %d REVERSAL entries for %d and %d successful messages",
				p.authID, fl.Net, r.Held, fl.Settles, fl.Reverses, okClears, okReverses)
		}
		if okClears == 1 && r.Status != network.AuthCleared {
			add("hold %s: a clearing succeeded but its status is %s", p.authID, r.Status)
		}
		switch r.Status {
		case network.AuthCleared:
			f.cleared++
		case network.AuthReversed:
			f.reversed++
		case network.AuthExpired:
			f.expired++
		default:
			f.stillOp++
		}
		captured[p.card.no] += r.Captured
	}
	// The network cards' balances: their funding minus what was captured.
	for _, m := range ms {
		nos := make([]string, len(m.netCards))
		for i, c := range m.netCards {
			nos[i] = c.no
		}
		cards, err := l.cards.Cards(ctx, m.id, nos)
		if err != nil {
			add("network cards of %d: %v", m.id, err)
			continue
		}
		for _, c := range m.netCards {
			got := cards[c.no]
			if got == nil || got.Held != 0 || got.Available != c.initial-captured[c.no] {
				add("network card %s: %+v, want available %d held 0", c.no, got, c.initial-captured[c.no])
			}
		}
	}
	return v, f
}

// holdFlowsSQL nets, per authorization, its entries' postings into and out
// of card held accounts, and counts its clearings and reversals.
const holdFlowsSQL = `
	select e.auth_id,
	       coalesce(sum(case when hd.id is not null then p.amount else 0 end), 0)
	     - coalesce(sum(case when hs.id is not null then p.amount else 0 end), 0) as net,
	       count(distinct case when e.kind = 'CARD_SETTLE' then e.merchant_seq end) as settles,
	       count(distinct case when e.kind = 'REVERSAL' then e.merchant_seq end) as reverses
	from entries e
	join postings p on p.merchant_id = e.merchant_id and p.merchant_seq = e.merchant_seq
	left join accounts hd on hd.id = p.destination_id and hd.type = 'card_held'
	left join accounts hs on hs.id = p.source_id and hs.type = 'card_held'
	where e.auth_id is not null
	group by e.auth_id`

type remitPlanned struct {
	m      *merchant
	in     remittance.RemittanceInput
	key    string
	tx     string
	status string
	want   string // SETTLED, RETURNED or REJECTED, from the beneficiary
}

func planRemits(rng *rand.Rand, ms []*merchant, n int, sanctioned, callback string) []*remitPlanned {
	var out []*remitPlanned
	for i := 0; i < n; i++ {
		m := ms[rng.IntN(len(ms))]
		name, account, want := "Hans Muster GmbH", fmt.Sprintf("DE89370400440532%06d", 1+rng.IntN(899999)), remittance.RemitSettled
		if strings.HasSuffix(account, "0000") {
			account = account[:len(account)-1] + "1"
		}
		switch r := rng.IntN(100); {
		case r < 20:
			account, want = "DE89370400440532010000", remittance.RemitReturned // the simulated rail returns *0000
		case r < 30:
			name, want = sanctioned, remittance.RemitRejected
		}
		b, _ := json.Marshal(map[string]string{"name": name, "country": "DE", "bank_swift": "COBADEFFXXX", "account_no": account})
		out = append(out, &remitPlanned{m: m, want: want, key: fmt.Sprintf("chaos-remit-%d", i), in: remittance.RemittanceInput{
			PayerID: "payer-1", Beneficiary: b, Amount: 10_00 + rng.Int64N(990_00), Fee: 1_00 + rng.Int64N(9_00),
			Currency: m.cur, Purpose: "SUPP", Rail: "SEPA", CallbackURL: callback}})
	}
	return out
}

type remitFacts struct{ settled, returned, rejected, history int }

// checkRemits: no remittance transitioned twice. Each went through its
// lifecycle once (one history row per status, in order), to the outcome
// its beneficiary calls for, with its entries exactly once.
func checkRemits(ctx context.Context, db *bun.DB, plan []*remitPlanned) ([]string, remitFacts) {
	var v []string
	var f remitFacts
	add := func(format string, args ...any) { v = append(v, fmt.Sprintf(format, args...)) }
	var twice int
	if err := db.NewRaw(`select count(*) from (select 1 from remittance_history group by tx_id, status having count(*) > 1) x`).Scan(ctx, &twice); err != nil {
		add("remittance_history: %v", err)
	}
	if twice > 0 {
		add("%d (txId, status) pairs appear more than once in remittance_history: a remittance transitioned twice", twice)
	}
	for _, p := range plan {
		if p.tx == "" {
			continue
		}
		var hist []string
		if err := db.NewRaw(`select status from remittance_history where tx_id = ? order by seq`, p.tx).Scan(ctx, &hist); err != nil {
			add("history of %s: %v", p.tx, err)
			continue
		}
		f.history += len(hist)
		path := strings.Join(hist, ">")
		want := "SUBMITTED>SCREENING>IN_FLIGHT>" + p.want
		if p.want == remittance.RemitRejected {
			want = "SUBMITTED>SCREENING>REJECTED"
		}
		if path != want || p.status != p.want {
			add("remittance %s went %s (status %s), want %s", p.tx, path, p.status, want)
		}
		var n struct {
			Out, Settle, Return, FeeRefund, Events int
		}
		if err := db.NewRaw(`
			select count(*) filter (where kind = 'REMIT_OUT') as out, count(*) filter (where kind = 'REMIT_SETTLE') as settle,
			       count(*) filter (where kind = 'REMIT_RETURN') as return, count(*) filter (where kind = 'FEE_REFUND') as fee_refund,
			       (select count(*) from events where subject = ? and event_type = 'remittance.status') as events
			from entries where tx_id = ?`, p.tx, p.tx).Scan(ctx, &n); err != nil {
			add("entries of %s: %v", p.tx, err)
			continue
		}
		wantSettle, wantReturn, wantRefund := 0, 0, 0
		switch p.status {
		case remittance.RemitSettled:
			wantSettle = 1
			f.settled++
		case remittance.RemitReturned:
			wantReturn = 1
			f.returned++
		case remittance.RemitRejected:
			wantReturn, wantRefund = 1, 1
			f.rejected++
		}
		if n.Out != 1 || n.Settle != wantSettle || n.Return != wantReturn || n.FeeRefund != wantRefund || n.Events != len(hist)-1 {
			add("remittance %s (%s): %d REMIT_OUT, %d REMIT_SETTLE, %d REMIT_RETURN, %d FEE_REFUND, %d status events for %d steps",
				p.tx, p.status, n.Out, n.Settle, n.Return, n.FeeRefund, n.Events, len(hist)-1)
		}
	}
	return v, f
}
