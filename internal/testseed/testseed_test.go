package testseed

import (
	"flag"
	"regexp"
	"strings"
	"testing"
)

var testFlag = flag.Uint64("testseed.seed", 0, "this package's own seed flag, for its tests")

func TestSeedPrefersTheFlagThenTheFixedSeedThenTheClock(t *testing.T) {
	if got := Seed(t, "./internal/testseed", "testseed.seed", 17); got != 17 {
		t.Errorf("no flag, fixed 17: got %d", got)
	}
	if got := Seed(t, "./internal/testseed", "testseed.seed", 0); got == 0 {
		t.Error("no flag, no fixed seed: got 0, want one from the clock")
	}
	*testFlag = 99
	defer func() { *testFlag = 0 }()
	if got := Seed(t, "./internal/testseed", "testseed.seed", 17); got != 99 {
		t.Errorf("flag 99, fixed 17: got %d", got)
	}
}

// go test splits -run at each "/" and matches each part against one level
// of the name; so does this test.
func TestRunPatternSelectsExactlyTheTest(t *testing.T) {
	matches := func(pattern, name string) bool {
		ps, ns := strings.Split(pattern, "/"), strings.Split(name, "/")
		if len(ps) != len(ns) {
			return false
		}
		for i := range ps {
			if !regexp.MustCompile(ps[i]).MatchString(ns[i]) {
				return false
			}
		}
		return true
	}
	for _, tc := range []struct{ name, miss string }{
		{"TestA", "TestAB"},
		{"TestA/15_%", "TestA/15_%x"},
		{"TestA/a+b", "TestA/aab"},
	} {
		pattern := RunPattern(tc.name)
		if !matches(pattern, tc.name) || matches(pattern, tc.miss) {
			t.Errorf("%s: pattern %q matches it %v, matches %q %v", tc.name, pattern, matches(pattern, tc.name), tc.miss, matches(pattern, tc.miss))
		}
	}
}
