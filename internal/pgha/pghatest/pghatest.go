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

// StartPair starts a Pair for t in a directory of its own.
func StartPair(t testing.TB) *pgha.Pair {
	t.Helper()
	return StartPairWith(t, pgha.PairOptions{})
}

// StartPairWith starts a Pair for t with opts, in Dir(t) when opts.Dir is
// empty.
func StartPairWith(t testing.TB, opts pgha.PairOptions) *pgha.Pair {
	t.Helper()
	skipShort(t)
	if opts.Dir == "" {
		opts.Dir = Dir(t)
	}
	dir := opts.Dir
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	p, err := pgha.StartPair(ctx, opts)
	if err != nil {
		t.Fatalf("starting a primary and a synchronous standby in %s: %v", dir, err)
	}
	t.Cleanup(p.Stop)
	return p
}

// Dir makes a directory for t's servers, removed when t ends unless t
// failed or PGHA_KEEP is set (the servers' logs, */postgres.log, tell what
// happened). It is made with os.MkdirTemp, not t.TempDir: the postgres user
// (the servers' user when the test runs as root) must be able to reach it,
// and t.TempDir's parent is private. Cleanups run last-in first-out, so
// servers started in it after this call are stopped before it is removed.
//
// Every HA test starts its servers in such a directory, so it skips t under
// -short: the fast tier (make test-short) starts no PostgreSQL.
func Dir(t testing.TB) string {
	t.Helper()
	skipShort(t)
	dir, err := os.MkdirTemp("", "pgha-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { //nolint:gosec // the postgres user must traverse it
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("PGHA_KEEP") != "" {
			t.Logf("pghatest: kept %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	return dir
}

// RequireEnv is the variable that makes a missing HA tool (pgbackrest,
// pg_autoctl) fail a test instead of skipping it: `make test`, which
// installs them (make pg-ha), sets it.
const RequireEnv = "GATEWAY_TEST_REQUIRE_HA_TOOLS"

// NeedTool skips t when find (pgha.FindPgBackRest, pgha.FindPgAutoctl)
// cannot find its program, unless RequireEnv is set, then it fails t.
func NeedTool(t testing.TB, find func() (string, error)) {
	t.Helper()
	if _, err := find(); err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("%v (%s is set: this run must have it)", err, RequireEnv)
		}
		t.Skipf("%v; `make test` installs it and runs this test", err)
	}
}

// skipShort skips t under -short, as ledger/pgtest.SkipShort does (this
// package may not import pgtest: internal/archtest).
func skipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts PostgreSQL servers: skipped under -short (make test-short); make test runs it")
	}
}
