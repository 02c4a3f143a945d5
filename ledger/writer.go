package ledger

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
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

// runBatch commits a batch, retrying transient failures, and splits it into
// single commands when the batch as a whole fails for another reason, so that
// the command at fault fails alone.
func (w *writer) runBatch(batch []*request) {
	live := batch[:0:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- result{err: err} // never started: nothing happened
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	results, err := w.commitWithRetry(live)
	if err == nil {
		for i, r := range live {
			r.done <- results[i]
		}
		return
	}
	// A batch that failed for one command's sake runs its commands one by
	// one; so does one still contended after its retries (each command
	// gets its own). Not after an outage, an unknown outcome, or a lock or
	// statement time-out: every command would wait the time-out again.
	if len(live) > 1 && !isOutcomeUnknown(err) &&
		(postings.ErrorCode(err) != postings.EUNAVAILABLE || isReason(err, postings.ReasonContention)) {
		w.stats.splits.Add(1)
		w.l.log.Warn("ledger batch failed; running its commands one by one", "commands", len(live), "error", err)
		for _, r := range live {
			w.runBatch([]*request{r})
		}
		return
	}
	if isOutcomeUnknown(err) {
		// COMMIT itself failed: the batch may or may not be in. The
		// caller retries with its key and learns which (docs/reliability.md).
		w.l.log.Warn("ledger commit outcome unknown", "commands", len(live), "error", err)
		err = &postings.Error{Code: postings.EUNAVAILABLE, Reason: postings.ReasonOutcomeUnknown,
			Message: "the database went away while committing; retry with the same Idempotency-Key to learn the outcome"}
	}
	for _, r := range live {
		r.done <- result{err: err}
	}
	if isOutage(err) {
		w.failQueued(batchShard(live))
	}
}

// failQueued answers every request waiting on a shard with EUNAVAILABLE
// after a batch found the database unavailable: they have not started, so
// nothing of theirs happened, and each would otherwise wait its turn for an
// attempt that fails the same way.
func (w *writer) failQueued(shard chan *request) {
	if shard == nil {
		return
	}
	for {
		select {
		case r := <-shard:
			r.done <- result{err: &postings.Error{Code: postings.EUNAVAILABLE, Message: "the database is unavailable"}}
		default:
			return
		}
	}
}

// batchShard is the shard of a batch's commands (one shard per batch).
func batchShard(batch []*request) chan *request {
	if len(batch) == 0 {
		return nil
	}
	return batch[0].shard
}

func (w *writer) commitWithRetry(batch []*request) ([]result, error) {
	var err error
	for attempt := 0; attempt < batchAttemptsMax; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(retryBackoffBaseMs<<attempt) * time.Millisecond)
		}
		var results []result
		results, err = w.commit(batch)
		if err == nil {
			return results, nil
		}
		if !isTransient(err) || isOutage(err) {
			// An unavailable database is not retried here, nor a lock or
			// statement time-out (isTransient): the caller hears at once
			// and retries with its key.
			return nil, MapError(err)
		}
		w.stats.retries.Add(1)
		w.l.log.Debug("ledger batch retried", "attempt", attempt+1, "error", err)
	}
	// Still contended after every attempt: EUNAVAILABLE (contention), a
	// 503 with Retry-After, never a 500.
	return nil, MapError(err)
}

// commit runs one database transaction for the batch.
func (w *writer) commit(batch []*request) ([]result, error) {
	ctx := context.Background() // the batch outlives any one caller
	ctx, cancel := context.WithTimeout(ctx, batchTimeout)
	defer cancel()
	tx, err := w.l.beginState(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.end() // rolls back unless committed

	// One round trip: begin, lock the heads, read what every batch reads,
	// the idempotency keys and every row the commands named. The reads run
	// after the lock (the pipeline runs in order), so they see what the
	// last holder committed.
	merchants := make([]int64, 0, len(batch))
	keys := make([]*idemKey, 0, len(batch))
	for _, r := range batch {
		merchants = append(merchants, r.cmd.MerchantID())
		if r.key != nil {
			keys = append(keys, r.key)
		}
		r.cmd.Prefetch(tx)
	}
	locked := UniqueSorted(merchants)
	p := tx.Pipeline()
	tx.begin(p)
	tx.queueLockHeads(p, locked)
	tx.beginStates(p, locked)
	tx.queueIdempotency(p, keys)
	tx.queueLoad(p)
	if err := p.Send(); err != nil {
		return nil, err
	}

	results := make([]result, len(batch))
	for i, r := range batch {
		results[i] = tx.run(r.cmd, r.key)
	}
	if err := tx.flush(); err != nil {
		return nil, err
	}
	if err := tx.commitTx(); err != nil {
		return nil, err
	}
	w.stats.batches.Add(1)
	w.stats.commands.Add(int64(len(batch)))
	w.l.afterCommit(tx)
	return results, nil
}

// batchTimeout bounds one batch transaction, well below the 60-second
// request time-out of the API.
const batchTimeout = 20 * time.Second

// outcomeUnknownError is a failure of COMMIT itself: the transaction may or
// may not have committed, so it is never retried blindly.
type outcomeUnknownError struct{ err error }

func (e *outcomeUnknownError) Error() string {
	return "commit outcome unknown: " + e.err.Error()
}

func (e *outcomeUnknownError) Unwrap() error { return e.err }

func isOutcomeUnknown(err error) bool {
	var e *outcomeUnknownError
	return errors.As(err, &e)
}

// run executes one command with its idempotency handling: a key seen
// before replays the stored result or refuses a different request; a new key
// stores the result (including a business failure, as Stripe does) in the
// same transaction.
func (tx *Tx) run(cmd Command, k *idemKey) result {
	if k != nil {
		if row, ok := tx.idem[k.id()]; ok {
			if row.fingerprint != k.fingerprint {
				return result{err: errIdemMismatch(k.key)}
			}
			return tx.replay(cmd, k, row)
		}
	}
	if tx.heads[cmd.MerchantID()] == nil {
		return result{err: postings.ReasonErrorf(postings.ENOTFOUND, postings.ReasonMerchant, "merchant not found")}
	}
	m := tx.mark()
	val, err := cmd.Execute(tx)
	if err != nil {
		tx.rollback(m)
		if k != nil && storable(err) {
			tx.storeIdempotency(k, m.entries, nil, err)
		}
		return result{err: err}
	}
	if k != nil {
		tx.storeIdempotency(k, m.entries, val, nil)
	}
	return result{val: val}
}

// storable reports whether a failure is a decision worth remembering under an
// idempotency key: business failures are; internal errors and outages are
// not, so that a retry can succeed.
func storable(err error) bool {
	switch postings.ErrorCode(err) {
	case postings.EINTERNAL, postings.EUNAVAILABLE, postings.EINPROGRESS, "":
		return false
	}
	return true
}

func truncateKey(k string) string {
	if len(k) > 40 {
		return k[:40] + "…"
	}
	return k
}

type writerStats struct {
	batches, commands, splits, retries atomic.Int64
}

// Stats are counters of the writer since the ledger started.
type Stats struct {
	Batches  int64 // committed transactions
	Commands int64 // commands in them (Commands/Batches is the batching factor)
	Splits   int64 // batches that failed as a whole and ran command by command
	Retries  int64 // transactions retried after a transient failure
}

// Stats returns the writer's counters.
func (l *Ledger) Stats() Stats {
	s := &l.w.stats
	return Stats{Batches: s.batches.Load(), Commands: s.commands.Load(), Splits: s.splits.Load(), Retries: s.retries.Load()}
}
