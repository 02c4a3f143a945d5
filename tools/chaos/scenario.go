package main

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/tools/internal/harness"
)

// The steps every scenario takes the same way: its summary line's
// violations, a fresh database with the ledger the checks read it through,
// a gateway started on it, and the count of retried operations.

// recorders are a scenario's ways to write its summary line: add records a
// violation and goes on; fail records one and ends the scenario with it
// (its elapsed time counted from start).
func (res *result) recorders(start time.Time) (add func(format string, args ...any), fail func(format string, args ...any) *result) {
	add = func(format string, args ...any) {
		res.violations = append(res.violations, fmt.Sprintf(format, args...))
	}
	fail = func(format string, args ...any) *result {
		add(format, args...)
		res.elapsed = time.Since(start)
		return res
	}
	return add, fail
}

// newLedgerDB makes the database name and opens the ledger on it (conns
// connections); the error says which of the two failed. The caller closes
// db and l.
func (e *env) newLedgerDB(ctx context.Context, name string, conns int, cfg ledger.Config, holdExpiry time.Duration) (
	url string, db *bun.DB, l *services, err error) {
	if url, err = e.newDatabase(ctx, name); err != nil {
		return "", nil, nil, fmt.Errorf("database: %w", err)
	}
	if db, l, err = e.openLedger(ctx, url, conns, cfg, holdExpiry); err != nil {
		return "", nil, nil, fmt.Errorf("ledger: %w", err)
	}
	return url, db, l, nil
}

// startGateway makes the gateway name on the database at url and starts
// it; the error says which step failed. The caller stops it.
func (e *env) startGateway(ctx context.Context, name, url string, extra ...string) (*harness.Gateway, error) {
	g, err := e.newGateway(name, url, extra...)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	if err := g.Start(ctx); err != nil {
		return nil, fmt.Errorf("starting the gateway: %w", err)
	}
	return g, nil
}

// countAttempts notes the requests r sent and the operations that needed
// more than one.
func (res *result) countAttempts(r *runner, ops []*shopOp) {
	res.attempts = r.attempts.Load()
	for _, op := range ops {
		if op.attempts > 1 {
			res.retries++
		}
	}
}
