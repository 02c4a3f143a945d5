// Package workers is the one home of the gateway's background workers: one
// shape (Worker: Start, Stop, Health) and one implementation of it (Loop:
// a step run on a ticker, on demand, and again at once while it has more to
// do), with the list of the gateway's workers and their intervals
// (gateway.go). Each worker's step is its domain's: hold expiry is the
// network's, the remittance lifecycle the remittance domain's, callback
// dispatch the delivery domain's, idempotency pruning the ledger's. Every
// worker is safe to run in several gateway processes on one database: the
// steps claim their rows (SKIP LOCKED) or check them again under the
// merchant's lock.
package workers

import (
	"context"
	"time"
)

// Worker is a background worker.
type Worker interface {
	// Name identifies the worker in logs and Health.
	Name() string
	// Start runs the worker in its own goroutine until ctx ends or Stop.
	// It starts a worker once; a second Start does nothing.
	Start(ctx context.Context)
	// Stop stops the worker and waits until its current step is over.
	Stop()
	// Health tells what the worker did last.
	Health() Health
}

// Health is what a worker did last.
type Health struct {
	Name    string    `json:"name"`
	Running bool      `json:"running"`
	Steps   int64     `json:"steps"`             // steps run since Start
	LastRun time.Time `json:"lastRun,omitzero"`  // when the last step ended
	LastOK  time.Time `json:"lastOk,omitzero"`   // when a step last ended without an error
	Failing string    `json:"failing,omitempty"` // the last step's error, "" when it succeeded
	// Failures counts the steps that ended in an error since Start (the
	// metric gateway_worker_failures_total).
	Failures int64 `json:"failures"`
}
