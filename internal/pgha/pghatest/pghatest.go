// Package pghatest starts a pgha.Pair for a test: a primary and a
// synchronous standby in a fresh directory, stopped and removed when the
// test ends.
package pghatest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/pgha"
)

// StartTimeout bounds the start of a pair (two initdb, a base backup): a
// broken setup fails the test instead of hanging it.
const StartTimeout = 2 * time.Minute

// StartPair starts a Pair for t. Its directory is made with os.MkdirTemp,
// not t.TempDir: the postgres user (the servers' user when the test runs as
// root) must be able to reach it, and t.TempDir's parent is private.
func StartPair(t testing.TB) *pgha.Pair {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgha-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { //nolint:gosec // the postgres user must traverse it
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	p, err := pgha.StartPair(ctx, pgha.PairOptions{Dir: dir})
	if err != nil {
		t.Fatalf("starting a primary and a synchronous standby in %s: %v", dir, err)
	}
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() || os.Getenv("PGHA_KEEP") != "" {
			// The servers' logs (a/postgres.log, b/postgres.log) tell
			// what happened.
			t.Logf("pghatest: kept %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	return p
}
