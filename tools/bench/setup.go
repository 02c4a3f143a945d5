package main

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Setup goes through the ledger library in this process, on the gateway's
// own database (the head locks make two writers on one database safe), or
// through SQL where the data is not journal. None of it is measured.

// merchantSetup is a merchant with its credentials and cards.
type merchantSetup struct {
	creds
	cards []string
}

// spreadSetup: scenario 1's merchants (and the cards scenarios 3 and 4 use).
type spreadSetup struct {
	merchants []*merchantSetup
	cards     []cardRef // every card, for picking one at random
}

type cardRef struct {
	m    *merchantSetup
	card string
}

// billSetup: the merchant with the big journal.
type billSetup struct {
	merchantSetup
	entries     int
	entriesRate float64 // entries/s of the setup's ledger.Append
	took        time.Duration
	pgCPUMs     float64 // PostgreSQL's CPU per entry, ms
	benchCPUMs  float64 // this process's (the ledger writer's) CPU per entry, ms
}

const (
	benchBIN        = "453201" // the default catalogue's USD VISA entry
	depositMinor    = 1_000_000_000_00
	spreadCardMinor = 1_000_00
)

// newMerchant creates a USD merchant on TIER_3 (so that the daily issuing
// limit never stops a run), funded with depositMinor.
func (b *bench) newMerchant(name, callbackURL string) (*merchantSetup, error) {
	m, cr, err := b.ms.CreateMerchant(b.ctx, merchant.Spec{Name: name, Currencies: []string{"USD"}, CallbackURL: callbackURL})
	if err != nil {
		return nil, fmt.Errorf("creating merchant %s: %w", name, err)
	}
	if err := b.cards.SetKYBTier(b.ctx, m.ID, cards.KYBTier3); err != nil {
		return nil, fmt.Errorf("KYB tier of %s: %w", name, err)
	}
	if _, err := b.l.Deposit(b.ctx, m.ID, "USD", depositMinor, nil); err != nil {
		return nil, fmt.Errorf("deposit of %s: %w", name, err)
	}
	c, err := b.newCreds(m.ID, cr.ShopNo, cr.PublicKey, cr.PrivateKey)
	if err != nil {
		return nil, err
	}
	return &merchantSetup{creds: c}, nil
}

// createCards issues n cards of amount minor units for each merchant, with
// many concurrent CreateCard calls (the writer batches them).
func (b *bench) createCards(ms []*merchantSetup, n int, amount int64) error {
	type job struct {
		m *merchantSetup
	}
	jobs := make(chan job)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				c, err := b.cards.CreateCard(b.ctx, j.m.id, cards.CreateCardInput{Bin: benchBIN, Currency: "USD", Amount: amount}, nil)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if err == nil {
					j.m.cards = append(j.m.cards, c.CardNo)
				}
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < n && firstErr == nil && b.ctx.Err() == nil; i++ {
		for _, m := range ms {
			jobs <- job{m}
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return fmt.Errorf("creating cards: %w", firstErr)
	}
	return b.ctx.Err()
}

// spread prepares scenario 1's merchants and cards once.
func (b *bench) spread() (*spreadSetup, error) {
	if b.spreadSet != nil {
		return b.spreadSet, nil
	}
	t0 := time.Now()
	progress(b.log, "setup: %d merchants with %d cards each (ledger library)", b.o.merchants, b.o.cardsPer)
	s := &spreadSetup{}
	for i := 0; i < b.o.merchants; i++ {
		m, err := b.newMerchant(fmt.Sprintf("Bench spread %d", i), "")
		if err != nil {
			return nil, err
		}
		s.merchants = append(s.merchants, m)
	}
	if err := b.createCards(s.merchants, b.o.cardsPer, spreadCardMinor); err != nil {
		return nil, err
	}
	for _, m := range s.merchants {
		for _, c := range m.cards {
			s.cards = append(s.cards, cardRef{m, c})
		}
	}
	progress(b.log, "setup: %d cards ready in %s", len(s.cards), time.Since(t0).Round(time.Millisecond))
	b.spreadSet = s
	return s, nil
}

// hot prepares scenario 2's merchant once.
func (b *bench) hot() (*merchantSetup, error) {
	if b.hotSet != nil {
		return b.hotSet, nil
	}
	m, err := b.newMerchant("Bench hot", "")
	if err != nil {
		return nil, err
	}
	b.hotSet = m
	return m, nil
}

// billKinds are the kinds of the bill merchant's entries, in turn: half
// DEPOSIT, a quarter each FEE_REFUND and REMIT_RETURN, so that a filter by
// type keeps a known share of the bill (scenario 8: FEE_REFUND and
// REMIT_RETURN, half the lines). Every one is world → funding, 1 USD.
var billKinds = []postings.Kind{postings.KindDeposit, postings.KindDeposit, postings.KindFeeRefund, postings.KindRemitReturn}

// bill prepares the merchant with b.o.entries journal entries once: entries
// of billKinds (world → funding, one bill line each) appended through
// ledger.Append in batches of ledger.BatchEntriesMax, from many concurrent
// callers for this one merchant, so the hash chain, the sequence and the
// bill are the real ones.
func (b *bench) bill() (*billSetup, error) {
	if b.billSet != nil {
		return b.billSet, nil
	}
	m, err := b.newMerchant("Bench bill", "")
	if err != nil {
		return nil, err
	}
	s := &billSetup{merchantSetup: *m}
	total := b.o.entries
	callers := max(1, b.o.billCallers)
	progress(b.log, "setup: %d journal entries for one merchant through ledger.Append (batches of %d, %d concurrent callers)",
		total, ledger.BatchEntriesMax, callers)
	var (
		left     atomic.Int64
		done     atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	left.Store(int64(total))
	pg0, self0 := b.pgCPUMs(), procCPUMs(os.Getpid())
	stopPerf := b.startPerf("5-setup-append")
	t0 := time.Now()
	stopProgress := make(chan struct{})
	go func() {
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stopProgress:
				return
			case <-t.C:
				n := done.Load()
				progress(b.log, "setup: %d of %d entries (%.0f/s)", n, total, float64(n)/time.Since(t0).Seconds())
			}
		}
	}()
	for w := 0; w < callers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b.ctx.Err() == nil {
				n := min(int64(ledger.BatchEntriesMax), left.Add(-ledger.BatchEntriesMax)+ledger.BatchEntriesMax)
				if n <= 0 {
					return
				}
				entries := make([]postings.Entry, n)
				for i := range entries {
					entries[i] = postings.Entry{Merchant: m.id, Kind: billKinds[i%len(billKinds)], Postings: []postings.Posting{{
						Source:      postings.MerchantAccount(m.id, postings.AccountWorld, "USD"),
						Destination: postings.MerchantAccount(m.id, postings.AccountFunding, "USD"),
						Amount:      1, Currency: "USD",
					}}}
				}
				if _, err := b.l.Append(b.ctx, ledger.Batch{Merchant: m.id, Entries: entries}); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				done.Add(n)
			}
		}()
	}
	wg.Wait()
	stopPerf()
	close(stopProgress)
	if firstErr != nil {
		return nil, fmt.Errorf("appending the bill merchant's entries: %w", firstErr)
	}
	if err := b.ctx.Err(); err != nil {
		return nil, err
	}
	s.took = time.Since(t0)
	s.entries = int(done.Load())
	if s.entries > 0 {
		s.pgCPUMs = (b.pgCPUMs() - pg0) / float64(s.entries)
		s.benchCPUMs = (procCPUMs(os.Getpid()) - self0) / float64(s.entries)
	}
	s.entriesRate = float64(s.entries) / s.took.Seconds()
	progress(b.log, "setup: %d entries in %s (%.0f entries/s)", s.entries, s.took.Round(time.Millisecond), s.entriesRate)
	// Fresh statistics for the planner, as autovacuum would give them
	// shortly after such a load.
	if _, err := b.db.ExecContext(b.ctx, "analyze"); err != nil {
		return nil, err
	}
	b.billSet = s
	return s, nil
}
