// Package testseed gives a randomized test its seed and the line that
// replays it. A test that draws from a seed the clock chose fails once in a
// while on a draw nobody can repeat unless the seed is printed and can be
// given back; a test with a fixed seed never explores beyond its one draw
// unless another seed can be given. Each package registers its own flag
// (flags must exist before the tests run) and asks Seed for the value.
package testseed

import (
	"flag"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Seed returns the value of the uint64 flag named flagName when it is
// given (not 0); otherwise fixed when that is not 0 (a test that keeps one
// draw in CI), otherwise a seed from the clock. It logs the command that
// replays the test with that seed; dir is the package's directory as `go
// test` takes it ("./ledger"). A flag that is not registered is a bug of
// the test and fails it.
func Seed(t testing.TB, dir, flagName string, fixed uint64) uint64 {
	t.Helper()
	f := flag.Lookup(flagName)
	if f == nil {
		t.Fatalf("testseed: no flag -%s is registered", flagName)
	}
	seed, err := strconv.ParseUint(f.Value.String(), 10, 64)
	if err != nil {
		t.Fatalf("testseed: -%s=%s: %v", flagName, f.Value.String(), err)
	}
	if seed == 0 {
		seed = fixed
	}
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (reproduce: go test %s -race -run '%s' -args -%s=%d)", seed, dir, RunPattern(t.Name()), flagName, seed)
	return seed
}

// RunPattern is the -run pattern that selects exactly the test (or subtest)
// of that name: each level anchored and quoted, since subtest names may hold
// characters of a regular expression ("15_%", "a+b").
func RunPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}
