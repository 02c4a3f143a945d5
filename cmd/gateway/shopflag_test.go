package main

import (
	"strings"
	"testing"
	"time"
)

// An unknown --shop-no is the caller's mistake, a usage error (exit status
// 2), not a break or a mismatch the check found (1): a script that treats 1
// as "the books are wrong" must not page finance for a typo.
func TestUnknownShopIsAUsageError(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	g.createMerchant("Known shop", "USD") // a migrated, non-empty installation
	day := time.Now().UTC().Format(time.DateOnly)
	for _, args := range [][]string{
		{"audit", "verify", "--shop-no", "SH0000000000"},
		{"audit", "statement", "--shop-no", "SH0000000000", "--from", day, "--to", day},
	} {
		r := g.run(args...)
		if r.code() != 2 || r.err == nil || !strings.Contains(r.err.Error(), `--shop-no "SH0000000000": merchant not found`) {
			t.Errorf("gateway %s: exit %d, %v; want 2 naming the flag", strings.Join(args, " "), r.code(), r.err)
		}
	}
}
