package postings

import "testing"

// runs is how many random cases a property test draws: n in `make test`,
// a tenth of it under -short (`make test-short`), where the fast tier's
// budget is the whole suite's 90 s on two cores. Every case drawn is still
// checked in full; only the count shrinks.
func runs(n int) int {
	if testing.Short() {
		return max(n/10, 1)
	}
	return n
}
