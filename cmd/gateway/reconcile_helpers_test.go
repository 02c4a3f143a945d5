package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Shared setups of the reconcile, report, close and checkpoint command
// tests, written once instead of copied into each.

// newShopGateway is a fresh installation with one merchant of currencies
// and a deposit per "CUR AMOUNT" in deposits.
func newShopGateway(t *testing.T, name, currencies string, deposits ...string) (*gateway, credentials) {
	t.Helper()
	g := newGateway(t)
	c := g.createMerchant(name, currencies)
	for _, d := range deposits {
		cur, amount, _ := strings.Cut(d, " ")
		g.deposit(c.ShopNo, cur, amount)
	}
	return g, c
}

// checkpointKey makes a checkpoint key pair in dir with `audit
// checkpoint-key` and returns the private key file's path.
func (g *gateway) checkpointKey(dir string) string {
	g.t.Helper()
	key := filepath.Join(dir, "checkpoint.key")
	g.mustRun("audit", "checkpoint-key", "--out", key)
	return key
}

// aroundToday is yesterday and tomorrow (UTC): a period that holds what a
// test books now even across midnight.
func aroundToday() (from, to string) {
	now := time.Now().UTC()
	return now.AddDate(0, 0, -1).Format(time.DateOnly), now.AddDate(0, 0, 1).Format(time.DateOnly)
}

// wantUnusable runs a command that must exit 2 saying want, without ever
// echoing the Latin-1 byte of the tests' files.
func (g *gateway) wantUnusable(want string, args ...string) {
	g.t.Helper()
	r := g.run(args...)
	said := r.stdout + r.stderr
	if r.err != nil {
		said += r.err.Error()
	}
	if r.code() != 2 || !strings.Contains(said, want) || strings.Contains(said, "\xe9") {
		g.t.Errorf("%v: exit %d, want 2 saying %q:\n%s", args, r.code(), want, said)
	}
}

// wantQuietDay: `gateway reconcile KIND` of a file with only its period
// line and header (header), on a day the ledger has nothing of, matches
// (exit status 0) under its title; the file is written into dir.
func (g *gateway) wantQuietDay(dir, kind, header, title string) {
	g.t.Helper()
	out := g.mustRun("reconcile", kind, "--file", writeFile(g.t, dir, "quiet.csv", header))
	if !strings.Contains(out, title+" quiet.csv") || !strings.HasSuffix(out, "(exit status 0)\n") {
		g.t.Errorf("a quiet day:\n%s", out)
	}
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
