package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/pgha"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/tools/internal/harness"
)

// The high-availability scenarios (issue 19, docs/ha.md "Chaos"): a
// pg_auto_failover formation (monitor, primary, synchronous standby, WAL
// archived by pgBackRest) on the HA ports, several gateways on its
// multi-host URL, and
//   - primary lost: SIGKILL of the primary's keeper and PostgreSQL under
//     load; pg_auto_failover promotes the standby; the clients retry with
//     their keys; then every acknowledged operation exactly once, audit
//     verify, every callback delivered, the workers' transitions once, the
//     old primary back as the standby and caught up;
//   - standby lost: the same with the standby killed: writes wait until the
//     monitor releases the primary (wait_primary), then continue;
//   - restore: a backup, writes, a moment, more writes; a restore to the
//     moment holds exactly the writes before it and verifies.

// haFormation is the formation the HA scenarios share, one per chaos run:
// creating it takes 15–40 s, and a failover leaves it whole (the old
// primary rejoins as the standby).
type haFormation struct {
	f    *pgha.Formation
	repo *pgha.Repo
	made time.Duration
}

// startFormation creates the formation in the run's directory on ports
// (monitor, node1, node2).
func (e *env) startFormation(ctx context.Context, ports []int) (*haFormation, error) {
	start := time.Now()
	// Both directly in the run's directory, which the postgres user can
	// traverse (the repository's files are pgBackRest's, run as postgres).
	repo, err := pgha.NewRepo(filepath.Join(e.tmp, "ha-backup"), nil)
	if err != nil {
		return nil, err
	}
	opts := pgha.FormationOptions{Dir: filepath.Join(e.tmp, "ha"), Ports: ports, Repo: repo}
	if e.verbose {
		opts.Log = e.out
	}
	f, err := pgha.StartFormation(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &haFormation{f: f, repo: repo, made: time.Since(start)}, nil
}

// newDatabase creates database name on the formation's primary.
func (h *haFormation) newDatabase(ctx context.Context, name string) (string, error) {
	db, err := sql.Open("pgx", h.f.URL("postgres"))
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "create database "+name); err != nil { // name is ours: [a-z0-9_]
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return haURL(h.f.URL(name)), nil
}

// haURL gives each host of a formation URL 10 s to connect instead of 2:
// at a load average of 37 from other work on this machine a new
// PostgreSQL connection took 3.9 s, every reconnection after the failover
// timed out, and the gateways answered 503 for over ten minutes (docs/ha.md,
// "CPU starvation"). On loopback a dead node refuses at once, so the longer
// limit costs a failover nothing.
func haURL(u string) string {
	return strings.Replace(u, "connect_timeout="+strconv.Itoa(pgha.ConnectTimeoutSeconds), "connect_timeout=10", 1)
}

// roles are the formation's primary and standby keepers now.
func (h *haFormation) roles(ctx context.Context) (primary, standby *pgha.Keeper, err error) {
	st, err := h.f.State(ctx)
	if err != nil {
		return nil, nil, err
	}
	p, ok := st.Primary()
	if !ok {
		return nil, nil, fmt.Errorf("no primary: %v", st)
	}
	for _, n := range h.f.Nodes {
		if n.Name == p.Name {
			primary = n
		} else {
			standby = n
		}
	}
	return primary, standby, nil
}

// waitSynchronous waits until the formation has a primary and every other
// node is its secondary (the formation is whole again).
func (h *haFormation) waitSynchronous(ctx context.Context, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		st, err := h.f.State(ctx)
		if err == nil {
			// One primary, every other node its secondary (two or three
			// data nodes).
			var p, s int
			for _, n := range st {
				if n.Reported == "primary" && n.Assigned == "primary" {
					p++
				}
				if n.Reported == "secondary" && n.Assigned == "secondary" {
					s++
				}
			}
			if p == 1 && s == len(st)-1 && s > 0 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the formation is not primary+secondary after %s: %v", limit, st)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

type haOptions struct {
	instances, ops, clients, remits, holds int
}

// haStack is what a failure scenario runs: its database, this process's
// ledger, the merchants, the callback receiver and the gateways.
type haStack struct {
	url  string
	db   *bun.DB
	l    *services
	rcv  *callbackReceiver
	ms   []*merchant
	gws  []*harness.Gateway
	stop func()
}

// newHAStack sets up a scenario's database on the formation and starts the
// gateways on its multi-host URL (their workers on: remittance lifecycle,
// expiry, callbacks).
func (e *env) newHAStack(ctx context.Context, h *haFormation, name string, o haOptions) (*haStack, error) {
	s := &haStack{}
	var closers []func()
	s.stop = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	fail := func(err error) (*haStack, error) {
		s.stop()
		return nil, err
	}
	url, err := h.newDatabase(ctx, name)
	if err != nil {
		return fail(err)
	}
	s.url = url
	db, l, err := e.openLedger(ctx, url, 8, ledger.Config{Shards: 2}, 4*time.Second)
	if err != nil {
		return fail(err)
	}
	closers = append(closers, func() { l.Close(); db.Close() })
	s.db, s.l = db, l
	rcv, err := newCallbackReceiver(5 * time.Millisecond)
	if err != nil {
		return fail(err)
	}
	closers = append(closers, rcv.close)
	s.rcv = rcv
	ms, err := setupMerchants(ctx, l, 3, 8, 500_00, rcv.url)
	if err != nil {
		return fail(fmt.Errorf("setup: %w", err))
	}
	for _, m := range ms {
		rcv.addKey(m.shopNo, m.priv)
		for j := 0; j < 2; j++ {
			c, err := l.cards.CreateCard(ctx, m.id, cards.CreateCardInput{Bin: m.bin, Currency: m.cur, Amount: 5_000_00, Remark: "chaos network"}, nil)
			if err != nil {
				return fail(fmt.Errorf("network card: %w", err))
			}
			m.netCards = append(m.netCards, &card{no: c.CardNo, m: m, initial: 5_000_00})
			m.setupFunding += 5_000_00
		}
	}
	s.ms = ms
	if _, err := l.remit.ReplaceSanctions(ctx, []remittance.SanctionsEntry{{Name: haSanctioned, Country: "DE", List: "CHAOS", Ref: "C-1"}}); err != nil {
		return fail(fmt.Errorf("sanctions: %w", err))
	}
	for i := 0; i < o.instances; i++ {
		g, err := e.newGateway(fmt.Sprintf("%s-%d", name, i+1), url,
			"GATEWAY_REMIT_SCREENING_DELAY=300ms", "GATEWAY_REMIT_IN_FLIGHT=700ms", "GATEWAY_HOLD_EXPIRY=4s")
		if err != nil {
			return fail(err)
		}
		s.gws = append(s.gws, g)
	}
	closers = append(closers, func() {
		for _, g := range s.gws {
			g.Stop()
		}
	})
	var wg sync.WaitGroup
	errs := make([]error, len(s.gws))
	for i, g := range s.gws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = g.Start(ctx)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fail(fmt.Errorf("starting the gateways: %w", err))
		}
	}
	return s, nil
}

const haSanctioned = "Ivan Chaosovich Sanctionov"

// haLoad is the load of a failure scenario: shop operations over HTTP
// spread over the gateways, each retried with its key; remittances created
// by this process's ledger, retried with their keys; holds authorized
// before the fault and left to the gateways' expiry workers.
type haLoad struct {
	ops    []*shopOp
	remits []*remitPlanned
	holds  []*holdPlan
	r      *runner
	// firstWriteAfter is the end of the first successful write attempt
	// that began after the fault (zero: none).
	mu              sync.Mutex
	fault           time.Time
	firstWriteAfter time.Time
	slowestAfter    time.Duration // the slowest successful attempt that ended after the fault
	unavailable     int           // 503 answers after the fault
	remitRetries    int
}

func (ld *haLoad) observe(a attempt) {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	if ld.fault.IsZero() || a.end.Before(ld.fault) {
		return
	}
	if a.status == 503 {
		ld.unavailable++
	}
	if a.transport == nil && a.status == 200 && a.envelope && a.code == 200 {
		if a.start.After(ld.fault) && (ld.firstWriteAfter.IsZero() || a.end.Before(ld.firstWriteAfter)) {
			ld.firstWriteAfter = a.end
		}
		ld.slowestAfter = max(ld.slowestAfter, a.end.Sub(a.start))
	}
}

func (ld *haLoad) setFault(t time.Time) {
	ld.mu.Lock()
	ld.fault = t
	ld.mu.Unlock()
}

// authorizeHolds authorizes the planned holds with this process's ledger
// (4 s expiry); none is cleared or reversed: the gateways' expiry workers
// release each, once, whichever node is primary by then.
func authorizeHolds(ctx context.Context, rng *rand.Rand, l *services, ms []*merchant, n int, seed uint64) ([]*holdPlan, error) {
	var out []*holdPlan
	for i := 0; i < n; i++ {
		m := ms[rng.IntN(len(ms))]
		p := &holdPlan{card: m.netCards[rng.IntN(len(m.netCards))], amount: 1_00 + rng.Int64N(99_00),
			authMsg: fmt.Sprintf("chaos-ha-%d-auth-%d", seed, i)}
		res, err := l.network.Authorize(ctx, network.AuthRequest{MessageID: p.authMsg, CardNo: p.card.no, Amount: p.amount,
			Currency: p.card.m.cur, MerchantName: "Chaos Store", MCC: "5999", MerchantCountry: "US"})
		if err != nil {
			return nil, fmt.Errorf("authorize: %w", err)
		}
		p.authID, p.approved = res.AuthID, res.Approved
		out = append(out, p)
	}
	return out, nil
}

// createRemits creates the planned remittances one after the other with
// this process's ledger, each retried with its key until it is answered,
// as a client would across the failover.
func (ld *haLoad) createRemits(ctx context.Context, l *services) error {
	for _, p := range ld.remits {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			rm, err := l.remit.CreateRemittance(ctx, p.m.id, p.in, &ledger.Idempotency{Scope: ledger.ScopeShop, Key: p.key})
			if err == nil {
				p.tx = rm.TxID
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("remittance %s: %w", p.key, err)
			}
			ld.mu.Lock()
			ld.remitRetries++
			ld.mu.Unlock()
			time.Sleep(200 * time.Millisecond)
		}
		time.Sleep(remitEvery)
	}
	return nil
}

// remitEvery paces the remittances so that their creation and their
// lifecycle span the fault (40 of them take 16 s, and the load about as
// long).
const remitEvery = 400 * time.Millisecond

// workFacts are what the workers did after the fault: remittance
// transitions, holds expired, callbacks delivered.
type workFacts struct {
	RemitSteps int `bun:"remit_steps"`
	Expired    int `bun:"expired"`
	Created    int `bun:"created"`
}

func workAfter(ctx context.Context, db *bun.DB, t time.Time) (workFacts, error) {
	var f workFacts
	err := db.NewRaw(`select
		(select count(*) from remittance_history where seq > 1 and at > ?) as remit_steps,
		(select count(*) from authorizations where status = 'EXPIRED' and updated_at > ?) as expired,
		(select count(*) from remittances where created_at > ?) as created`, t, t, t).Scan(ctx, &f)
	return f, err
}

// settle waits for the workers: every remittance terminal, every hold
// closed, every callback sent; then notes the remittances' effect on the
// funding accounts for checkShopOps.
func (s *haStack) settle(ctx context.Context, ld *haLoad, add func(string, ...any)) {
	waitNone(ctx, s.db, add, remitsOpen, 2*time.Minute)
	// The gateways' expiry workers run at start and every 30 s.
	waitNone(ctx, s.db, add, holdsOpen, 75*time.Second)
	waitNone(ctx, s.db, add, callbacksPending, 2*time.Minute)
	noteRemitEffects(ctx, s.db, add, ld.remits)
}

// ackCounts are the acknowledged operations and what the journal holds of
// them: lost (absent) and doubled (more than once).
type ackCounts struct{ acked, lost, doubled int }

func countAcked(ctx context.Context, db *bun.DB, ops []*shopOp, remits []*remitPlanned) (ackCounts, error) {
	var c ackCounts
	var txIDs, cardNos []string
	for _, o := range ops {
		if !o.ok() {
			continue
		}
		switch o.kind {
		case kindIn, kindOut:
			txIDs = append(txIDs, o.txID)
		case kindCreate:
			if o.amount > 0 {
				cardNos = append(cardNos, o.cardNo)
			} else {
				c.acked++ // a card without funding: checkShopOps finds it
			}
		default:
			c.acked++ // freeze/unfreeze: no entry
		}
	}
	for _, p := range remits {
		if p.tx != "" {
			txIDs = append(txIDs, p.tx)
		}
	}
	var rows []struct {
		Ref string `bun:"ref"`
		N   int    `bun:"n"`
	}
	err := db.NewRaw(`
		select r.ref, (select count(*) from entries e where e.tx_id = r.ref and e.kind in ('CARD_TRANSFER_IN', 'CARD_TRANSFER_OUT', 'REMIT_OUT')) as n
		from unnest(?::text[]) as r(ref)
		union all
		select r.ref, (select count(*) from entries e where e.card_no = r.ref and e.kind = 'CARD_FUND') as n
		from unnest(?::text[]) as r(ref)`, pgdialect.Array(txIDs), pgdialect.Array(cardNos)).Scan(ctx, &rows)
	if err != nil {
		return c, err
	}
	for _, r := range rows {
		c.acked++
		switch {
		case r.N == 0:
			c.lost++
		case r.N > 1:
			c.doubled++
		}
	}
	return c, nil
}

// checkCallbacksHA: every delivery of the database was delivered and seen
// by the receiver, signed. Across a failover a callback may arrive twice
// with the same event_id (at-least-once: a delivery acknowledged by the
// receiver whose DELIVERED mark died with the primary is sent again); that
// is counted, not a violation.
func checkCallbacksHA(ctx context.Context, db *bun.DB, rcv *callbackReceiver) ([]string, string) {
	var v []string
	add := func(format string, args ...any) { v = append(v, fmt.Sprintf(format, args...)) }
	dl, err := countDeliveries(ctx, db)
	if err != nil {
		add("deliveries: %v", err)
	}
	rs := rcv.stats()
	dl.check(rs, add)
	note := fmt.Sprintf("callbacks: %d deliveries received for %d events (%d delivered in the database, %d with more than one attempt); "+
		"%d events received more than once, %d attempts while another of the same event was inside (at-least-once across the failover)",
		rs.total, rs.events, dl.Delivered, dl.Multi, rs.redelivered, rs.concurrent)
	return v, note
}

// waitCaughtUp waits until node's copy of the scenario's database has as
// many journal entries and bill lines as the primary's (the load is over:
// the primary does not move), and returns how long that took.
func (h *haFormation) waitCaughtUp(ctx context.Context, node *pgha.Keeper, dbName string, primary *bun.DB, limit time.Duration) error {
	var want struct {
		Entries int64 `bun:"entries"`
		Lines   int64 `bun:"lines"`
	}
	q := `select (select count(*) from entries) as entries, (select count(*) from bill_lines) as lines`
	if err := primary.NewRaw(q).Scan(ctx, &want); err != nil {
		return err
	}
	ndb, err := sql.Open("pgx", h.f.NodeURL(node, dbName))
	if err != nil {
		return err
	}
	defer ndb.Close()
	deadline := time.Now().Add(limit)
	for {
		var e, l int64
		err := ndb.QueryRowContext(ctx, q).Scan(&e, &l)
		if err == nil && e == want.Entries && l == want.Lines {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s has %d entries and %d bill lines, the primary %d and %d (%v)", node.Name, e, l, want.Entries, want.Lines, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// runHAScenarios starts the formation, runs the HA scenarios wanted
// (primary lost for the first haRuns seeds, standby lost and restore for
// the first seed), and stops it.
func runHAScenarios(ctx context.Context, e *env, want map[string]bool, ports []int, seeds []uint64, haRuns int, o haOptions, report func(*result)) error {
	if _, err := pgha.FindPgAutoctl(); err != nil {
		return err
	}
	if _, err := pgha.FindPgBackRest(); err != nil {
		return err
	}
	e.logf("ha: creating a pg_auto_failover formation (monitor, primary, synchronous standby, pgBackRest) on ports %v", ports)
	h, err := e.startFormation(ctx, ports)
	if err != nil {
		return fmt.Errorf("the formation: %w", err)
	}
	defer h.f.Stop()
	e.logf("ha: formation ready in %s", h.made.Round(time.Millisecond))
	if want["primary"] {
		for i, s := range seeds {
			if i >= haRuns || ctx.Err() != nil {
				break
			}
			e.logf("primary lost: seed %d: %d gateways, %d shop operations from %d clients, %d remittances, %d holds",
				s, o.instances, o.ops, o.clients, o.remits, o.holds)
			report(runHALoss(ctx, e, h, s, losePrimary, o))
		}
	}
	if want["frozen"] && ctx.Err() == nil {
		e.logf("primary frozen: seed %d", seeds[0])
		report(runHALoss(ctx, e, h, seeds[0], freezePrimary, o))
	}
	if want["standby"] && ctx.Err() == nil {
		e.logf("standby lost: seed %d", seeds[0])
		report(runHALoss(ctx, e, h, seeds[0], loseStandby, o))
	}
	if want["restore"] && ctx.Err() == nil {
		e.logf("restore: seed %d", seeds[0])
		report(runHARestore(ctx, e, h, seeds[0], 20))
	}
	return nil
}

// parsePorts reads "p1,p2,p3": three TCP ports.
func parsePorts(s string) ([]int, error) {
	var ports []int
	for _, f := range strings.Split(s, ",") {
		p, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || p < 1024 || p > 65535 {
			return nil, fmt.Errorf("%q is not a port from 1024 to 65535", f)
		}
		ports = append(ports, p)
	}
	if len(ports) != 3 {
		return nil, fmt.Errorf("want 3 ports (monitor, node1, node2), got %d", len(ports))
	}
	return ports, nil
}

// printHATable prints the HA scenarios' figures per seed.
func printHATable(results []*result) {
	seen := false
	for _, r := range results {
		seen = seen || r.ha != nil
	}
	if !seen {
		return
	}
	fmt.Println()
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HA scenario\tseed\tacknowledged\tlost\tdoubled\tkill → first write\tslowest write after\t503s after\trejoin (secondary)\tcaught up\tsingle-copy window\trestore")
	for _, r := range results {
		f := r.ha
		if f == nil {
			continue
		}
		dur := func(d time.Duration) string {
			if d == 0 {
				return "—"
			}
			return d.Round(10 * time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", r.fault, r.seed, f.acked, f.lost, f.doubled,
			dur(f.firstWrite), dur(f.slowest), f.unavailable, dur(f.rejoin), dur(f.catchUp), single(f), dur(f.restore))
	}
	tw.Flush()
}

// single is a loss scenario's single-copy window for the table: 0 is a
// figure there (nothing acknowledged with one copy), "—" is none measured.
func single(f *haFigures) string {
	if !f.copiesMeasured {
		return "—"
	}
	return f.singleCopy.Round(10 * time.Millisecond).String()
}
