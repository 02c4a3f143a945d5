package cards

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paygate/gateway/ledger"
)

// MerchantOf finds the merchant of a card, outside any batch: a network
// message names a card, not a merchant, and the batch that handles it
// reads the card again under that merchant's lock.
//
// A card never changes merchant, so the answer is cached (bounded, started
// over when full). A miss does not cost a statement of its own: misses
// that arrive while a lookup is running wait for the next one, which reads
// all of them in one statement (as the writer groups commands into a
// batch). Under the bench's scenario 3, where most authorizations are a
// card's first message, one statement per miss was 4,696 autocommit round
// trips in an 8 s window, the gateway's largest statement count.
func (s *Service) MerchantOf(ctx context.Context, cardNo string) (int64, bool, error) {
	if m, ok := s.owners.get(cardNo); ok {
		return m, true, nil
	}
	lk := &ownerLookup{cardNo: cardNo, done: make(chan struct{})}
	if s.owners.enqueue(lk) {
		go s.lookupOwners()
	}
	select {
	case <-lk.done:
		return lk.merchant, lk.found, lk.err
	case <-ctx.Done():
		return 0, false, ctx.Err() // answered as the request's time-out
	}
}

// lookupOwners reads the merchants of the queued misses, ownersLookupMax
// at a time, until none is left.
func (s *Service) lookupOwners() {
	for {
		batch := s.owners.take(ownersLookupMax)
		if len(batch) == 0 {
			return
		}
		if s.owners.beforeLookup != nil {
			s.owners.beforeLookup(len(batch))
		}
		cardNos := make([]string, 0, len(batch))
		for _, lk := range batch {
			cardNos = append(cardNos, lk.cardNo)
		}
		found := make(map[string]int64, len(batch))
		// Not any one waiter's context: a waiter that gives up must not
		// fail the others. The lookup is bounded by its own time-out.
		ctx, cancel := context.WithTimeout(context.Background(), ownersLookupTimeout)
		err := s.l.Query(ctx, stmtCardMerchants, func(rows pgx.Rows) error {
			for rows.Next() {
				var cardNo string
				var m int64
				if err := rows.Scan(&cardNo, &m); err != nil {
					return err
				}
				found[cardNo] = m
			}
			return nil
		}, cardNos)
		cancel()
		for _, lk := range batch {
			lk.err = err
			if err == nil {
				lk.merchant, lk.found = found[lk.cardNo]
				if lk.found { // not cached when absent: the card may be created later
					s.owners.put(lk.cardNo, lk.merchant)
				}
			}
			close(lk.done)
		}
	}
}

// stmtCardMerchants is prepared and probes the primary key once per card
// whatever the statistics (the lateral subquery is kept apart by offset
// 0, as the batch's card reads are).
var stmtCardMerchants = ledger.NewStmt(`select c.card_no, c.merchant_id
from unnest($1::text[]) as v(card_no)
cross join lateral (select card_no, merchant_id from cards where card_no = v.card_no offset 0) c`)

const (
	// ownersMax bounds the card → merchant cache (about 100 bytes each).
	ownersMax = 1 << 17
	// ownersLookupMax bounds the cards one lookup reads.
	ownersLookupMax = 256
	// ownersLookupTimeout bounds one lookup; a waiter stops waiting at its
	// own request's deadline before that.
	ownersLookupTimeout = 5 * time.Second
)

type owners struct {
	mu sync.RWMutex
	m  map[string]int64

	qmu     sync.Mutex
	queue   []*ownerLookup
	running bool // a goroutine is draining queue

	// beforeLookup, when set (tests), is called with each lookup's size
	// before its statement runs.
	beforeLookup func(n int)
}

// ownerLookup is one miss waiting for its lookup.
type ownerLookup struct {
	cardNo   string
	done     chan struct{} // closed once merchant, found and err are set
	merchant int64
	found    bool
	err      error
}

func (c *owners) get(cardNo string) (int64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	m, ok := c.m[cardNo]
	return m, ok
}

func (c *owners) put(cardNo string, merchant int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= ownersMax {
		c.m = make(map[string]int64)
	}
	c.m[cardNo] = merchant
}

// enqueue adds lk to the queue and reports whether the caller must start
// the goroutine that drains it (none is running).
func (c *owners) enqueue(lk *ownerLookup) bool {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	c.queue = append(c.queue, lk)
	if c.running {
		return false
	}
	c.running = true
	return true
}

// take removes up to n lookups from the queue; when it is empty it returns
// none and marks the draining goroutine as gone, under the same lock as
// enqueue, so that no lookup is left without one.
func (c *owners) take(n int) []*ownerLookup {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	if len(c.queue) == 0 {
		c.running = false
		return nil
	}
	if n > len(c.queue) {
		n = len(c.queue)
	}
	batch := append([]*ownerLookup(nil), c.queue[:n]...)
	c.queue = append(c.queue[:0], c.queue[n:]...)
	return batch
}
