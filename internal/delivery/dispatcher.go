package delivery

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"
)

// Claimer is what the dispatcher needs from the deliveries table: claim due
// deliveries (SKIP LOCKED, one attempt each) and record what the attempts
// found. *Store is one; tests wrap it to lose records.
type Claimer interface {
	ClaimDeliveries(ctx context.Context, limit int, lease time.Duration) ([]Delivery, error)
	RecordDeliveries(ctx context.Context, recs []DeliveryRecord) error
}

var _ Claimer = (*Store)(nil)

// DispatcherOptions tune a dispatcher.
type DispatcherOptions struct {
	Workers  int           // concurrent attempts; default 32
	BatchMax int           // deliveries claimed per round; default 256
	Lease    time.Duration // how long a claim lasts; default 30s
	Now      func() time.Time
	Log      *slog.Logger
}

// Dispatcher sends due callbacks: it claims them from the store, sends each
// attempt with the Sender, and records the outcome with the next attempt
// time from the retry schedule (or dead after the 24-hour window). Several
// dispatchers, in one process or many, share the work through the store's
// claims. Delivery is at least once: a crash between sending and recording
// sends the same event (same event_id) again once the lease runs out.
type Dispatcher struct {
	store  Claimer
	sender *Sender
	opts   DispatcherOptions

	rndMu sync.Mutex
	rnd   *rand.Rand
}

// NewDispatcher returns a dispatcher; internal/workers runs its rounds.
func NewDispatcher(store Claimer, sender *Sender, opts DispatcherOptions) *Dispatcher {
	if opts.Workers <= 0 {
		opts.Workers = 32
	}
	if opts.BatchMax <= 0 {
		opts.BatchMax = 256
	}
	if opts.Lease <= 0 {
		opts.Lease = 30 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	seed := uint64(opts.Now().UnixNano())
	return &Dispatcher{store: store, sender: sender, opts: opts,
		rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))} //nolint:gosec // G404: retry jitter, not a secret
}

// Round claims one batch, sends it, and records the outcomes together once
// every attempt of the round is over: one statement and one commit a round
// instead of one per callback. A crash before the record sends the round's
// events again once the lease runs out (same event_id: at least once).
func (d *Dispatcher) Round(ctx context.Context) (int, error) {
	due, err := d.store.ClaimDeliveries(ctx, d.opts.BatchMax, d.opts.Lease)
	if err != nil || len(due) == 0 {
		return 0, err
	}
	sem := make(chan struct{}, d.opts.Workers)
	var wg sync.WaitGroup
	recs := make([]DeliveryRecord, len(due))
	for i := range due {
		sem <- struct{}{}
		wg.Add(1)
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			recs[i] = DeliveryRecord{Delivery: &due[i], Outcome: d.attempt(ctx, &due[i])}
		}(i)
	}
	wg.Wait()
	// The outcomes are recorded even when ctx ended during the round, so
	// that a shutdown does not cost a second send of acknowledged events.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	return len(due), d.store.RecordDeliveries(rctx, recs)
}

// recordTimeout bounds the record of a round's outcomes.
const recordTimeout = 10 * time.Second

func (d *Dispatcher) attempt(ctx context.Context, del *Delivery) DeliveryOutcome {
	at := d.opts.Now()
	res := d.sender.SendSigned(ctx, del.URL, del.Body, del.Signing())
	o := DeliveryOutcome{OK: res.OK, Status: res.Status, Error: res.Error, At: at, Duration: res.Duration}
	if !res.OK {
		d.rndMu.Lock()
		o.Next, o.Dead = NextAttempt(del.WindowStart, d.opts.Now(), del.Attempt, d.rnd)
		d.rndMu.Unlock()
	}
	d.opts.Log.Debug("callback attempt", "shop_no", del.ShopNo, "event_id", del.EventID, "attempt", del.Attempt,
		"ok", res.OK, "status", res.Status, "dead", o.Dead)
	return o
}
