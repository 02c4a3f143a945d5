package ledger

import (
	"sync/atomic"
)

type writerStats struct {
	batches, commands, splits, retries atomic.Int64
	// deferred counts requests that waited because a batch of their
	// merchant was in flight (writer.go).
	deferred atomic.Int64
}

// Stats are counters of the writer since the ledger started.
type Stats struct {
	Batches  int64 // committed transactions
	Commands int64 // commands in them (Commands/Batches is the batching factor)
	Splits   int64 // batches that failed as a whole and ran command by command
	Retries  int64 // transactions retried after a transient failure
	// Deferred counts requests that waited for their merchant's batch in
	// flight while the shard began another merchants' batch.
	Deferred int64
}

// Stats returns the writer's counters.
func (l *Ledger) Stats() Stats {
	s := &l.w.stats
	return Stats{Batches: s.batches.Load(), Commands: s.commands.Load(), Splits: s.splits.Load(), Retries: s.retries.Load(),
		Deferred: s.deferred.Load()}
}
