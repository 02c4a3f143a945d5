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

func (w *writer) runShard(in chan *request) {
	defer w.wg.Done()
	batch := make([]*request, 0, w.l.cfg.BatchMax)
	var timer *time.Timer
	for {
		var first *request
		select {
		case first = <-in:
		case <-w.stop:
			// Answer whatever is still queued, then stop.
			for {
				select {
				case r := <-in:
					r.done <- result{err: postings.Errorf(postings.EUNAVAILABLE, "the ledger is shutting down")}
				default:
					return
				}
			}
		}
		batch = append(batch[:0], first)
		// Take what is already queued; then, if a window is configured, wait
		// up to it for more, until the batch is full.
		deadline := time.Now().Add(w.l.cfg.BatchWindow)
	gather:
		for len(batch) < w.l.cfg.BatchMax {
			select {
			case r := <-in:
				batch = append(batch, r)
				continue
			default:
			}
			wait := time.Until(deadline)
			if wait <= 0 {
				break
			}
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			select {
			case r := <-in:
				batch = append(batch, r)
				if !timer.Stop() {
					<-timer.C
				}
			case <-timer.C:
				break gather
			}
		}
		w.runBatch(batch)
	}
}
