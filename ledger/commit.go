package ledger

import (
	"context"
	"errors"
	"time"

	"github.com/paygate/gateway/postings"
)

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
	if w.l.cfg.BatchTrace != nil {
		tx.trace = &BatchTrace{Commands: len(batch)}
	}

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
	// Only the COMMIT is left: the shard may begin a batch of other
	// merchants (writer.go).
	batch[0].flight.markFlushed()
	if w.l.beforeCommit != nil {
		w.l.beforeCommit(locked)
	}
	if err := tx.commitTx(); err != nil {
		return nil, err
	}
	w.stats.batches.Add(1)
	w.stats.commands.Add(int64(len(batch)))
	if tx.trace != nil {
		tx.trace.Merchants = len(locked)
		w.l.cfg.BatchTrace(*tx.trace)
	}
	w.l.afterCommit(tx)
	return results, nil
}

// batchTimeout bounds one batch transaction, well below the 60-second
// request time-out of the API.
const batchTimeout = 20 * time.Second

// CommitTimeoutDefault is Config.CommitTimeout's default: a COMMIT is one
// WAL flush on the primary and one on the synchronous standby, milliseconds
// even on a loaded machine (p99 of a whole request 1.1 s at a load average
// of 27, docs/ha.md), so 5 s without an answer means a server that is gone
// or frozen. It also bounds what a silent primary costs a batch already at
// its COMMIT, whatever the Watch finds.
const CommitTimeoutDefault = 5 * time.Second

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
