package postings

import (
	"flag"
	"testing"

	"github.com/paygate/gateway/internal/testseed"
)

// The property tests draw from fixed seeds, so that CI repeats one draw;
// -postings.seed=N draws another, to explore (a loop over N) or to replay
// what such a loop found.
var _ = flag.Uint64( // read by name in testseed.Seed
	"postings.seed", 0, "seed of the postings property tests; 0 keeps each test's fixed seed")

func propertySeed(t *testing.T, fixed uint64) uint64 {
	t.Helper()
	return testseed.Seed(t, "./postings", "postings.seed", fixed)
}
