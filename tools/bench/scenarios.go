package main

import (
	"encoding/json"
	"fmt"
	"github.com/paygate/gateway/api/client"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paygate/gateway/ledger"
)

type scenario struct {
	id    string
	title string
	run   func(b *bench) ([]row, error)
}

func scenarios() []scenario {
	return []scenario{
		{"1", "transfers IN/OUT over many cards", scenarioTransfers},
		{"2", "card creation and top-ups for one hot merchant", scenarioHot},
		{"3", "card authorizations", scenarioAuthorize},
		{"4", "balance reads", scenarioBalances},
		{"5", "bill export, page 1 against page 10,000", scenarioBill},
		{"6", "callback delivery", scenarioCallbacks},
		{"7", "gateway audit verify", scenarioVerify},
		{"8", "filtered bill, page 1 against page 1,000", scenarioBillFilter},
		{"C", "transfers on one cell against two (issue 33)", scenarioCells},
		{"H", "transfers with a synchronous standby, an asynchronous one, none", scenarioStandby},
		{"L", "ledger.Append in process (no HTTP)", scenarioLedger},
		{"S", "one merchant against sixteen (issue 20)", scenarioSpread},
		{"U", "/shop/account during an 8 MiB sanctions load (issue 27)", scenarioSanctionsLoad},
	}
}

// gatewayRow is a row of a run against the gateway, with its ceiling.
func gatewayRow(name string, r *runResult, ceiling *runResult) row {
	out := row{Scenario: name, OpsPerSec: r.opsPerSec, P50Ms: r.p50(), P99Ms: r.p99(), Ops: r.n, Errors: r.errs,
		GatewayCPUPerOpMs: r.cpuPerOpMs, MaxRSSMB: r.rssMaxMB, PgCPUPerOpMs: r.pgCPUPerOpMs, BenchCPUPerOpMs: r.benchCPUPerOpMs,
		GatewayBatching: r.batching, GatewaySplits: r.splits, GatewayRetries: r.retries}
	if ceiling != nil && ceiling.opsPerSec > 0 {
		out.CeilingOps = ceiling.opsPerSec
		out.Ratio = r.opsPerSec / ceiling.opsPerSec
		out.CeilingPgCPUPerOpMs = ceiling.pgCPUPerOpMs
		out.CeilingP50Ms, out.CeilingP99Ms = ceiling.p50(), ceiling.p99()
	}
	return out
}

// The targets of the timed scenarios: issue 8's, raised by issue 20 for
// margin (scenario 1 from 1.0× to 2.5× its ceiling, 2a from 5× to 7×, 3's
// p99 from 50 to 40 ms); 2b keeps issue 8's.
const (
	targetSpreadRatio = 2.5
	targetCreateRatio = 7.0
	targetTopUpRatio  = 5.0
	targetAuthP99Ms   = 40
)

// ratioTarget fills the target columns of a throughput ratio.
func (r *row) ratioTarget(min float64) {
	r.Target = fmt.Sprintf("≥ %.1f× ceiling", min)
	r.Measured = fmt.Sprintf("%.2f×", r.Ratio)
	r.Verdict = verdict(r.Ratio >= min)
}

func joinNotes(parts ...string) string {
	out := ""
	for _, p := range parts {
		if p == "" {
			continue
		}
		if out != "" {
			out += "; "
		}
		out += p
	}
	return out
}

// ceiling measures a ceiling once per run (scenarios and the in-process
// rows share the ones of the same postings).
func (b *bench) ceiling(key string, measure func() (*runResult, error)) (*runResult, error) {
	if b.ceilings == nil {
		b.ceilings = map[string]*runResult{}
	}
	if c, ok := b.ceilings[key]; ok {
		return c, nil
	}
	progress(b.log, "ceiling %s: plain SQL, %d connections", key, b.o.concurrency)
	c, err := measure()
	if err != nil {
		return nil, fmt.Errorf("ceiling %s: %w", key, err)
	}
	b.ceilings[key] = c
	return c, nil
}

// --- 1: transfers ---------------------------------------------------------

func scenarioTransfers(b *bench) ([]row, error) {
	s, err := b.spread()
	if err != nil {
		return nil, err
	}
	conc := b.o.concurrency
	progress(b.log, "1: POST /shop/card/transfer, %d clients, %s", conc, b.o.duration)
	res, err := b.driveTransfers(s, "1-transfers", "t1")
	if err != nil {
		return nil, err
	}
	ceil, err := b.ceiling("spread", func() (*runResult, error) {
		return b.ceilingSpreadTransfers(conc, b.o.merchants, b.o.cardsPer)
	})
	if err != nil {
		return nil, err
	}
	r := gatewayRow(fmt.Sprintf("1  transfers IN/OUT, %d cards of %d merchants", len(s.cards), len(s.merchants)), res, ceil)
	r.ratioTarget(targetSpreadRatio)
	r.Note = joinNotes("ceiling: one plain-SQL transaction per transfer (2 row-locked updates, entry, posting)", res.errorNote())
	return []row{r}, nil
}

// driveTransfers is scenario 1's timed run: transfers of one cent IN or OUT
// of cards of s drawn at random, each with its own key (prefix keys).
func (b *bench) driveTransfers(s *spreadSetup, profile, keys string) (*runResult, error) {
	return b.driveTransfersN(s, b.o.concurrency, true, profile, keys)
}

// driveTransfersN is driveTransfers with conc clients; gateway: measure
// the gateway process (off for a second run beside one that does).
func (b *bench) driveTransfersN(s *spreadSetup, conc int, gateway bool, profile, keys string) (*runResult, error) {
	rngs := newRngs(conc, 1)
	return b.drive(driveSpec{concurrency: conc, duration: b.o.duration, warmup: b.o.warmup, profile: profile, gateway: gateway,
		op: func(w, i int) error {
			rng := rngs[w]
			c := s.cards[rng.IntN(len(s.cards))]
			dir := client.DirectionIn
			if rng.IntN(2) == 0 {
				dir = client.DirectionOut
			}
			_, err := c.m.shop.Transfer(b.ctx, client.TransferRequest{CardNo: c.card, Amount: cent, Currency: "USD", Direction: dir},
				client.WithIdempotencyKey(b.roundKey(keys, w, i)))
			return err
		}})
}

// --- 2: one hot merchant --------------------------------------------------

// cent and dollar are the amounts the scenarios move.
var (
	cent   = client.MustDecimal("0.01")
	dollar = client.MustDecimal("1.00")
)

func scenarioHot(b *bench) ([]row, error) {
	m, err := b.hot()
	if err != nil {
		return nil, err
	}
	conc := b.o.concurrency
	var rows []row
	ceil, err := b.ceiling("hot", func() (*runResult, error) { return b.ceilingHot(conc, 10_000) })
	if err != nil {
		return nil, err
	}

	progress(b.log, "2a: POST /shop/card/create for one merchant, %d clients, %s", conc, b.o.duration)
	create := client.CreateCardRequest{BIN: benchBIN, Currency: "USD", Amount: dollar}
	res, err := b.drive(driveSpec{concurrency: conc, duration: b.o.duration, warmup: b.o.warmup, profile: "2a-create", gateway: true,
		op: func(w, i int) error {
			c, err := m.shop.CreateCard(b.ctx, create, client.WithIdempotencyKey(b.roundKey("c2", w, i)))
			if err != nil {
				return err
			}
			b.hotCardsMu.Lock()
			if len(b.hotCards) < 20_000 {
				b.hotCards = append(b.hotCards, c.CardNo)
			}
			b.hotCardsMu.Unlock()
			return nil
		}})
	if err != nil {
		return nil, err
	}
	r := gatewayRow("2a card creation, one hot merchant", res, ceil)
	r.ratioTarget(targetCreateRatio)
	r.Note = joinNotes("each creation debits the merchant's one funding account (CARD_FUND 1.00); ceiling: one plain-SQL transaction per posting, all on one row-locked account",
		res.errorNote())
	rows = append(rows, r)

	if len(b.hotCards) < 100 {
		if err := b.createCards([]*merchantSetup{m}, 1000, 0); err != nil {
			return nil, err
		}
		b.hotCards = append(b.hotCards, m.cards...)
	}
	cards := b.hotCards
	rngs := newRngs(conc, 2)
	progress(b.log, "2b: POST /shop/card/transfer IN for one merchant over %d cards, %d clients, %s", len(cards), conc, b.o.duration)
	res, err = b.drive(driveSpec{concurrency: conc, duration: b.o.duration, warmup: b.o.warmup, profile: "2b-topup", gateway: true,
		op: func(w, i int) error {
			card := cards[rngs[w].IntN(len(cards))]
			_, err := m.shop.Transfer(b.ctx, client.TransferRequest{CardNo: card, Amount: cent, Currency: "USD", Direction: client.DirectionIn},
				client.WithIdempotencyKey(b.roundKey("t2", w, i)))
			return err
		}})
	if err != nil {
		return nil, err
	}
	r = gatewayRow("2b top-ups, one hot merchant", res, ceil)
	r.ratioTarget(targetTopUpRatio)
	r.Note = joinNotes("every top-up debits the same funding account; same ceiling as 2a", res.errorNote())
	rows = append(rows, r)
	return rows, nil
}

// --- 3: authorizations ----------------------------------------------------

func scenarioAuthorize(b *bench) ([]row, error) {
	s, err := b.spread()
	if err != nil {
		return nil, err
	}
	conc := b.o.concurrency
	nc := b.newNetworkClient()
	mode := nc.probe(s.cards[0].card)
	progress(b.log, "3: authorizations over %d cards via %s, %d clients, %s", len(s.cards), mode, conc, b.o.duration)
	rngs := newRngs(conc, 3)
	var (
		codesMu sync.Mutex
		codes   = map[string]int{}
	)
	res, err := b.drive(driveSpec{concurrency: conc, duration: b.o.duration, warmup: b.o.warmup, profile: "3-authorize", gateway: nc.http,
		op: func(w, i int) error {
			c := s.cards[rngs[w].IntN(len(s.cards))]
			code, err := nc.authorize(b.roundKey("auth", w, i), c.card)
			if err != nil {
				return err
			}
			codesMu.Lock()
			codes[code]++
			codesMu.Unlock()
			return nil
		}})
	if err != nil {
		return nil, err
	}
	ceil, err := b.ceiling("holds", func() (*runResult, error) { return b.ceilingHolds(conc, len(s.cards)) })
	if err != nil {
		return nil, err
	}
	r := gatewayRow(fmt.Sprintf("3  card authorizations, %d clients", conc), res, ceil)
	r.Target = fmt.Sprintf("p99 < %d ms", targetAuthP99Ms)
	r.Measured = fmt.Sprintf("p99 %s ms", fmtMs(res.p99()))
	r.Verdict = verdict(res.p99() < targetAuthP99Ms)
	codesJSON, _ := json.Marshal(codes)
	r.Note = joinNotes(nc.note, "response codes "+string(codesJSON),
		"ceiling: one plain-SQL transaction per hold (card available → held)", res.errorNote())
	rows := []row{r}

	// The same below saturation: the decision's own latency, without the
	// queueing of 32 clients on 2 cores.
	if low := b.o.authLowConc; low > 0 && low < conc {
		progress(b.log, "3b: authorizations, %d clients, %s", low, b.o.duration)
		res, err := b.drive(driveSpec{concurrency: low, duration: b.o.duration, warmup: b.o.warmup, profile: "3b-authorize-low", gateway: nc.http,
			op: func(w, i int) error {
				c := s.cards[rngs[w].IntN(len(s.cards))]
				_, err := nc.authorize(b.roundKey("authlow", w, i), c.card)
				return err
			}})
		if err != nil {
			return nil, err
		}
		r := gatewayRow(fmt.Sprintf("3b card authorizations, %d clients", low), res, nil)
		r.Measured = fmt.Sprintf("p99 %s ms", fmtMs(res.p99()))
		r.Note = joinNotes(fmt.Sprintf("not the target row: %d concurrent clients instead of %d, below saturation, so the latency without queueing", low, conc),
			res.errorNote())
		rows = append(rows, r)
	}
	return rows, nil
}

// --- 4: balance reads -----------------------------------------------------

func scenarioBalances(b *bench) ([]row, error) {
	s, err := b.spread()
	if err != nil {
		return nil, err
	}
	conc := b.o.concurrency
	rngs := newRngs(conc, 4)
	progress(b.log, "4a: GET /shop/card/balance, %d clients, %s", conc, b.o.duration)
	res, err := b.drive(driveSpec{concurrency: conc, duration: b.o.duration, warmup: b.o.warmup, profile: "4a-balance", gateway: true,
		op: func(w, _ int) error {
			c := s.cards[rngs[w].IntN(len(s.cards))]
			_, err := c.m.shop.CardBalance(b.ctx, c.card)
			return err
		}})
	if err != nil {
		return nil, err
	}
	ceil, err := b.ceiling("read1", func() (*runResult, error) { return b.ceilingBalanceReads(conc, len(s.cards), 1) })
	if err != nil {
		return nil, err
	}
	r := gatewayRow("4a balance reads", res, ceil)
	r.Note = joinNotes("ceiling: one plain-SQL point select by card number", res.errorNote())
	rows := []row{r}

	const batch = 100
	progress(b.log, "4b: POST /shop/card/balance/batch (%d cards), %d clients, %s", batch, conc, b.o.duration)
	res, err = b.drive(driveSpec{concurrency: conc, duration: b.o.duration, warmup: b.o.warmup, profile: "4b-balance-batch", gateway: true,
		op: func(w, _ int) error {
			rng := rngs[w]
			m := s.merchants[rng.IntN(len(s.merchants))]
			nos := make([]string, batch)
			for i := range nos {
				nos[i] = m.cards[rng.IntN(len(m.cards))]
			}
			// Without a key, as before the client: a keyed read claims its
			// key in the database, which this row does not measure.
			list, err := m.shop.CardBalances(b.ctx, nos, client.WithoutIdempotencyKey())
			if err != nil {
				return err
			}
			if len(list) != batch {
				return fmt.Errorf("batch balance: %d items for %d cards", len(list), batch)
			}
			return nil
		}})
	if err != nil {
		return nil, err
	}
	ceil, err = b.ceiling("read100", func() (*runResult, error) { return b.ceilingBalanceReads(conc, len(s.cards), batch) })
	if err != nil {
		return nil, err
	}
	r = gatewayRow(fmt.Sprintf("4b batch balance reads, %d cards", batch), res, ceil)
	r.Measured = fmt.Sprintf("%.0f cards/s", res.opsPerSec*batch)
	r.Note = joinNotes("ceiling: one plain-SQL select … where card_no = any($1) of 100 card numbers", res.errorNote())
	rows = append(rows, r)
	return rows, nil
}

// --- 5: the bill export ---------------------------------------------------

func scenarioBill(b *bench) ([]row, error) {
	s, err := b.bill()
	if err != nil {
		return nil, err
	}
	rows := []row{{Scenario: fmt.Sprintf("5· setup: %d entries, ledger.Append, one merchant", s.entries), OpsPerSec: s.entriesRate,
		PgCPUPerOpMs: s.pgCPUMs, BenchCPUPerOpMs: s.benchCPUMs,
		Note: fmt.Sprintf("not over HTTP and not a target: entries/s of %d concurrent Append calls of %d entries (DEPOSIT, FEE_REFUND, REMIT_RETURN) for one merchant (group commit); %s in all",
			b.o.billCallers, ledger.BatchEntriesMax, s.took.Round(time.Second))}}
	today := time.Now().UTC()
	query := func(page int) client.BillQuery {
		return client.BillQuery{StartDate: today.AddDate(0, 0, -1).Format("2006-01-02"),
			EndDate: today.AddDate(0, 0, 1).Format("2006-01-02"), Page: page, Size: 50}
	}
	// Is the endpoint in this build?
	probe, err := s.shop.Bill(b.ctx, query(1))
	if err != nil {
		rows = append(rows, row{Scenario: "5  bill export, last page vs page 1", Target: "p50 ≤ 1.5× page 1", Verdict: "n/a",
			Note: fmt.Sprintf("GET /shop/bill/list did not answer: %v", err)})
		return rows, nil
	}
	// Page 10,000 of 50 needs 500,000 lines; with a smaller -entries, the
	// last full page.
	lastPage := 10_000
	if probe.Total < int64(lastPage)*50 {
		lastPage = max(1, int(probe.Total/50))
	}
	conc := max(1, b.o.billConc)
	dur := max(b.o.duration/2, 2*time.Second)
	var results [2]*runResult
	for k, page := range []int{1, lastPage} {
		if k == 1 && lastPage == 1 {
			break
		}
		q := query(page)
		progress(b.log, "5: GET /shop/bill/list page %d (size 50), %d clients, %s", page, conc, dur)
		var short atomic.Int64
		res, err := b.drive(driveSpec{concurrency: conc, duration: dur, warmup: b.o.warmup / 2, profile: fmt.Sprintf("5-bill-page-%d", page), gateway: true,
			op: func(w, _ int) error {
				p, err := s.shop.Bill(b.ctx, q)
				if err != nil {
					return err
				}
				if len(p.List) != 50 {
					short.Add(1)
				}
				return nil
			}})
		if err != nil {
			return nil, err
		}
		results[k] = res
		r := gatewayRow(fmt.Sprintf("5%c bill page %d (size 50), %d entries", 'a'+k, page, s.entries), res, nil)
		notes := []string{fmt.Sprintf("%d concurrent clients; total %d bill lines", conc, probe.Total)}
		if n := short.Load(); n > 0 {
			notes = append(notes, fmt.Sprintf("%d answers had fewer than 50 lines", n))
		}
		notes = append(notes, res.errorNote())
		r.Note = joinNotes(notes...)
		rows = append(rows, r)
	}
	if results[1] == nil {
		return rows, nil
	}
	last := &rows[len(rows)-1]
	ratio := results[1].p50() / results[0].p50()
	last.Target = "p50 ≤ 1.5× page 1"
	last.Measured = fmt.Sprintf("%.2f× (p99 %.2f×)", ratio, results[1].p99()/results[0].p99())
	last.Verdict = verdict(ratio <= 1.5)
	return rows, nil
}
