package ledger

import (
	"cmp"
	"fmt"
	"slices"
)

// Small helpers of the core that the domain packages use too, so that
// every package writes rows and ids the same way.

// UniqueSorted returns xs sorted without repeats: the array of a probe
// statement names each row once, in a fixed order (lock order, for heads).
func UniqueSorted[T cmp.Ordered](xs []T) []T {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}

// Invariantf is a broken invariant: a bug, never the caller's fault. The
// API answers it as an internal error.
func Invariantf(format string, args ...any) error {
	return fmt.Errorf("ledger: invariant: "+format, args...)
}
