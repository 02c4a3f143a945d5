package ledger

import (
	"context"
	"sync"
	"time"

	"github.com/paygate/gateway/postings"
)

// The writer is the only way anything changes a merchant's journal, balances
// or objects. Commands go to one of a fixed number of shards (by merchant);
// each shard runs one database transaction at a time, holding every command
// that arrived while the previous transaction committed (group commit). In
// that transaction the merchants' journal heads are locked in id order, the
// commands run one by one against an in-memory view of their rows — each one
// validated on its own, so one that fails leaves no trace while the others
// commit — and everything is written with one statement per table.
//
// A caller is answered only after the commit. Several gateway processes can
// share a database: the head row locks serialise them per merchant.

// Limits of the writer.
const (
	cpusPerShard       = 2
	batchMaxDefault    = 256
	queueLenPerShard   = 4096
	batchAttemptsMax   = 4 // tries of a batch that fails with a transient error
	retryBackoffBaseMs = 5
)

type request struct {
	ctx   context.Context
	cmd   Command
	key   *idemKey // nil: no idempotency
	shard chan *request
	done  chan result // buffered: the writer never blocks on a caller
	// flight is the batch in flight that the request is part of: its
	// commit tells the shard when its writes are flushed (writer.go).
	flight *flight
}

type result struct {
	val any
	err error
}

type writer struct {
	l      *Ledger
	stats  writerStats
	shards []chan *request
	wg     sync.WaitGroup
	stop   chan struct{}
	once   sync.Once
}

func newWriter(l *Ledger) *writer {
	w := &writer{l: l, stop: make(chan struct{})}
	for i := 0; i < l.cfg.Shards; i++ {
		ch := make(chan *request, queueLenPerShard)
		w.shards = append(w.shards, ch)
		w.wg.Add(1)
		go w.runShard(ch)
	}
	return w
}

// submit hands cmd to its shard and waits for the outcome.
func (w *writer) submit(ctx context.Context, cmd Command, key *idemKey) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	shard := w.shards[int(uint64(cmd.MerchantID())%uint64(len(w.shards)))]
	req := &request{ctx: ctx, cmd: cmd, key: key, shard: shard, done: make(chan result, 1)}
	select {
	case shard <- req:
	case <-w.stop:
		return nil, postings.Errorf(postings.EUNAVAILABLE, "the ledger is shutting down")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case r := <-req.done:
		return r.val, r.err
	case <-ctx.Done():
		// The command may still commit; an idempotent retry will tell.
		return nil, &postings.Error{Code: postings.EUNAVAILABLE, Reason: postings.ReasonOutcomeUnknown,
			Message: "the request was abandoned before the ledger answered; retry with the same Idempotency-Key"}
	}
}

func (w *writer) close() {
	w.once.Do(func() { close(w.stop) })
	w.wg.Wait()
}

// A shard runs its batches one after another, except that the next batch
// may begin while the previous one's COMMIT is on its way, when none of its
// merchants is in a batch still in flight (docs/performance.md, "One
// merchant against sixteen"). A batch spends its COMMIT waiting for
// PostgreSQL's WAL flush, which uses no CPU; independent merchants' work
// fills that time, as several shards' batches always could. A merchant's
// commands still run one batch at a time, in the order they arrived: a
// request whose merchant is in flight waits, with every later request of
// that merchant, for that batch to end. One hot merchant's batches are
// therefore exactly as before.

// batchesInFlightDefault is how many batches of a shard may be in flight
// (Config.BatchesInFlight). One: the overlap above is there, tested, and
// off by default, because on a quiet machine it cost more than it saved
// (docs/performance.md, "After the merge, on a quiet machine").
const batchesInFlightDefault = 1

// flight is a batch in flight.
type flight struct {
	merchants []int64
	flushed   chan struct{} // closed once its writes are flushed, or it ended
	once      sync.Once
}

// markFlushed tells the shard that the batch is past its flush. Safe on a
// nil flight and more than once (a split batch flushes once per command).
func (f *flight) markFlushed() {
	if f == nil {
		return
	}
	f.once.Do(func() { close(f.flushed) })
}

// shardLoop is the state of one shard's goroutine.
type shardLoop struct {
	w        *writer
	in       chan *request
	pending  []*request     // requests whose merchant was in flight, in arrival order
	waiting  map[int64]int  // pending requests by merchant
	busy     map[int64]bool // merchants of the batches in flight
	ended    chan *flight
	inflight int
	running  *flight // the batch in flight that has not flushed yet
	timer    *time.Timer
}

func (w *writer) runShard(in chan *request) {
	defer w.wg.Done()
	inflightMax := w.l.cfg.BatchesInFlight
	s := &shardLoop{w: w, in: in, busy: map[int64]bool{}, waiting: map[int64]int{}, ended: make(chan *flight, inflightMax)}
	for {
		// A new batch begins when none is executing and a slot is free.
		for s.running != nil || s.inflight >= inflightMax {
			var flushed chan struct{}
			if s.running != nil {
				flushed = s.running.flushed
			}
			select {
			case <-flushed:
				s.running = nil
			case f := <-s.ended:
				s.release(f)
			}
		}
		batch := s.takePending(nil)
		for len(batch) == 0 {
			select {
			case r := <-in:
				batch = s.offer(batch, r)
			case f := <-s.ended:
				s.release(f)
				batch = s.takePending(batch)
			case <-w.stop:
				s.shutdown()
				return
			}
		}
		batch = s.gather(batch)
		s.launch(batch)
	}
}

// offer adds r to the batch, or to the pending requests when its merchant
// is in flight or already waits there (so it cannot overtake them).
func (s *shardLoop) offer(batch []*request, r *request) []*request {
	m := r.cmd.MerchantID()
	if s.busy[m] || s.waiting[m] > 0 {
		s.pending = append(s.pending, r)
		s.waiting[m]++
		s.w.stats.deferred.Add(1)
		return batch
	}
	return append(batch, r)
}

// takePending moves the pending requests whose merchant is not in flight
// into the batch, in order, up to BatchMax.
func (s *shardLoop) takePending(batch []*request) []*request {
	if len(s.pending) == 0 {
		return batch
	}
	left := s.pending[:0]
	for _, r := range s.pending {
		if m := r.cmd.MerchantID(); !s.busy[m] && len(batch) < s.w.l.cfg.BatchMax {
			batch = append(batch, r)
			if s.waiting[m]--; s.waiting[m] == 0 {
				delete(s.waiting, m)
			}
		} else {
			left = append(left, r)
		}
	}
	clear(s.pending[len(left):])
	s.pending = left
	return batch
}

// gather takes what is already queued; then, if a window is configured,
// waits up to it for more, until the batch is full.
func (s *shardLoop) gather(batch []*request) []*request {
	deadline := time.Now().Add(s.w.l.cfg.BatchWindow)
	for len(batch) < s.w.l.cfg.BatchMax {
		select {
		case r := <-s.in:
			batch = s.offer(batch, r)
			continue
		default:
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			break
		}
		if s.timer == nil {
			s.timer = time.NewTimer(wait)
		} else {
			s.timer.Reset(wait)
		}
		select {
		case r := <-s.in:
			batch = s.offer(batch, r)
			if !s.timer.Stop() {
				<-s.timer.C
			}
		case <-s.timer.C:
			return batch
		}
	}
	return batch
}

// launch runs the batch on a goroutine of its own.
func (s *shardLoop) launch(batch []*request) {
	f := &flight{flushed: make(chan struct{})}
	for _, r := range batch {
		m := r.cmd.MerchantID()
		if !s.busy[m] {
			s.busy[m] = true
			f.merchants = append(f.merchants, m)
		}
		r.flight = f
	}
	s.inflight++
	s.running = f
	go func() {
		s.w.runBatch(batch)
		f.markFlushed()
		s.ended <- f // buffered for every batch in flight: never blocks
	}()
}

// release forgets a batch that ended.
func (s *shardLoop) release(f *flight) {
	s.inflight--
	for _, m := range f.merchants {
		delete(s.busy, m)
	}
	if s.running == f {
		s.running = nil
	}
}

// shutdown answers whatever is still queued or pending, and waits for the
// batches in flight, which answer their own requests.
func (s *shardLoop) shutdown() {
	refuse := func(r *request) {
		r.done <- result{err: postings.Errorf(postings.EUNAVAILABLE, "the ledger is shutting down")}
	}
	for _, r := range s.pending {
		refuse(r)
	}
	s.pending, s.waiting = nil, map[int64]int{}
	for s.inflight > 0 {
		s.release(<-s.ended)
	}
	for {
		select {
		case r := <-s.in:
			refuse(r)
		default:
			return
		}
	}
}
