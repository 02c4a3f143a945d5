package ledger

import (
	"time"

	"github.com/paygate/gateway/postings"
)

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
	// gets its own); so does one a move's fence refused (isFence). Not
	// after an outage, an unknown outcome, or a lock or statement time-out:
	// every command would wait the time-out again.
	if len(live) > 1 && !isOutcomeUnknown(err) && (postings.ErrorCode(err) != postings.EUNAVAILABLE ||
		isReason(err, postings.ReasonContention) || isReason(err, postings.ReasonMerchantMoving)) {
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
			return nil, mapError(err)
		}
		w.stats.retries.Add(1)
		w.l.log.Debug("ledger batch retried", "attempt", attempt+1, "error", err)
	}
	// Still contended after every attempt: EUNAVAILABLE (contention), a
	// 503 with Retry-After, never a 500.
	return nil, mapError(err)
}
