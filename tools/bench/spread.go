package main

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/paygate/gateway/api/client"
)

// Scenario S (issue 20): is independent work at least as cheap as contended
// work? The same closed-loop load — spreadClients HTTPS clients, each
// sending transfers IN of 1.00 USD to a card with an Idempotency-Key of its
// own — comes once from one merchant (25 cards) and once from sixteen
// merchants (client i is merchant i, 25 cards each), the two windows back to
// back in one run, so that both see the same machine. Nothing is shared
// between sixteen merchants, so their transfers should not cost more than
// one merchant's. Its verdicts are ratios within the run: sixteen's
// throughput ≥ spreadRatioMin × one's, and sixteen's gateway + PostgreSQL
// CPU per transfer ≤ one's.
//
// Beside the CPU, each window records a count that the machine's load does
// not blur: the WAL bytes per transfer of the bench's own PostgreSQL
// (nothing else writes to it), with the gateway's commands per ledger
// transaction. With -perf, pg_stat_statements gives each statement's calls
// and rows per window.

const (
	spreadClients  = 16
	spreadCardsPer = 25
	spreadRatioMin = 1.1
)

// spreadLoads are the two merchant sets of scenario S.
type spreadLoads struct {
	one     *merchantSetup
	sixteen []*merchantSetup
}

// spreadLoadsOnce prepares scenario S's 17 merchants (funded, TIER_3) and
// their cards once.
func (b *bench) spreadLoadsOnce() (*spreadLoads, error) {
	if b.spreadLoadSet != nil {
		return b.spreadLoadSet, nil
	}
	progress(b.log, "setup S: 1 + %d merchants with %d cards each", spreadClients, spreadCardsPer)
	s := &spreadLoads{}
	var all []*merchantSetup
	for i := 0; i <= spreadClients; i++ {
		m, err := b.newMerchant(fmt.Sprintf("Bench S %d", i), "")
		if err != nil {
			return nil, err
		}
		all = append(all, m)
	}
	// Funded at creation, so that every card's accounts exist before the
	// first window: otherwise the first transfers to each card create them,
	// and the window that comes first pays for it.
	if err := b.createCards(all, spreadCardsPer, 1_00); err != nil {
		return nil, err
	}
	s.one, s.sixteen = all[0], all[1:]
	b.spreadLoadSet = s
	return s, nil
}

// walBytes is the bench cluster's WAL position in bytes: exact at any
// moment, unlike the statistics views, which a busy backend flushes at most
// once a second and an idle one up to ten seconds later.
func (b *bench) walBytes() (float64, bool) {
	var v float64
	err := b.db.QueryRowContext(b.ctx, "select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8").Scan(&v)
	return v, err == nil
}

// spreadWindow is one of the two loads, measured.
type spreadWindow struct {
	res *runResult
	// WAL written while the load ran (warm-up and let-finish included)
	// and the transfers that completed in that time.
	walBytes float64
	walOK    bool
	done     int64
}

func (w *spreadWindow) cpuPerOpMs() float64 { return w.res.cpuPerOpMs + w.res.pgCPUPerOpMs }

// countsNote is what the database wrote per transfer.
func (w *spreadWindow) countsNote() string {
	if !w.walOK || w.done == 0 {
		return ""
	}
	return fmt.Sprintf("WAL %.0f B per transfer (%d transfers)", w.walBytes/float64(w.done), w.done)
}

func (b *bench) driveSpreadLoad(name string, merchants []*merchantSetup) (*spreadWindow, error) {
	rngs := newRngs(spreadClients, 20)
	w := &spreadWindow{}
	var done atomic.Int64
	wal0, ok0 := b.walBytes()
	res, err := b.drive(driveSpec{concurrency: spreadClients, duration: b.o.duration, warmup: b.o.warmup, profile: name, gateway: true,
		op: func(wk, i int) error {
			m := merchants[wk%len(merchants)]
			card := m.cards[rngs[wk].IntN(len(m.cards))]
			_, err := m.shop.Transfer(b.ctx, client.TransferRequest{CardNo: card, Amount: dollar, Currency: "USD", Direction: client.DirectionIn},
				client.WithIdempotencyKey(fmt.Sprintf("%s-%d-%d-%d", name, time.Now().UnixNano(), wk, i)))
			if err == nil {
				done.Add(1)
			}
			return err
		}})
	if err != nil {
		return nil, err
	}
	wal1, ok1 := b.walBytes()
	w.walBytes, w.walOK, w.done = wal1-wal0, ok0 && ok1, done.Load()
	w.res = res
	return w, nil
}

func scenarioSpread(b *bench) ([]row, error) {
	s, err := b.spreadLoadsOnce()
	if err != nil {
		return nil, err
	}
	progress(b.log, "S: transfers IN of 1.00 USD, %d clients, one merchant then sixteen, %s each", spreadClients, b.o.duration)
	one, err := b.driveSpreadLoad("S1-one-merchant", []*merchantSetup{s.one})
	if err != nil {
		return nil, err
	}
	sixteen, err := b.driveSpreadLoad("S16-sixteen-merchants", s.sixteen)
	if err != nil {
		return nil, err
	}
	r1 := gatewayRow(fmt.Sprintf("S1 transfers IN, one merchant, %d cards, %d clients", spreadCardsPer, spreadClients), one.res, nil)
	r1.Note = joinNotes(one.countsNote(), one.res.errorNote())
	r16 := gatewayRow(fmt.Sprintf("S16 transfers IN, %d merchants (client i = merchant i), %d cards each", spreadClients, spreadCardsPer), sixteen.res, nil)
	ratio := sixteen.res.opsPerSec / one.res.opsPerSec
	r16.Ratio = ratio
	r16.Target = fmt.Sprintf("≥ %.1f× S1", spreadRatioMin)
	r16.Measured = fmt.Sprintf("%.2f×", ratio)
	r16.Verdict = verdict(ratio >= spreadRatioMin)
	r16.Note = joinNotes("ratio: S16 ops/s ÷ S1 ops/s in this run", sixteen.countsNote(), sixteen.res.errorNote())
	cpu1, cpu16 := one.cpuPerOpMs(), sixteen.cpuPerOpMs()
	rc := row{Scenario: "Sc CPU per transfer (gateway + PostgreSQL), S16 against S1",
		Target: "S16 ≤ S1", Measured: fmt.Sprintf("%.3f vs %.3f ms (%.2f×)", cpu16, cpu1, cpu16/cpu1),
		Ratio: cpu16 / cpu1, Verdict: verdict(cpu16 <= cpu1),
		Note: "the spread form of \"scenario 1's CPU per transfer ≤ scenario 2b's\": the same transfers, one merchant's against sixteen's, in one run"}
	return []row{r1, r16, rc}, nil
}
