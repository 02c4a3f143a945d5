package main

import (
	"errors"
	"testing"
)

// TestCellsC1Row: C1 is the two-cell runs' mean over the one-cell runs',
// against 0.9×; a failed request through the two-cell gateway misses.
func TestCellsC1Row(t *testing.T) {
	runs := func(errs int64, ops ...float64) []*runResult {
		var out []*runResult
		for _, o := range ops {
			r := &runResult{opsPerSec: o, errs: errs}
			if errs > 0 {
				r.firstErr = errors.New("503")
			}
			out = append(out, r)
		}
		return out
	}
	for _, c := range []struct {
		name      string
		one, two  []*runResult
		ratio     float64
		verdict   string
		errorsSum int64
	}{
		{"equal", runs(0, 100, 100), runs(0, 100, 100), 1, "PASS", 0},
		{"at the target", runs(0, 100, 100), runs(0, 80, 100), 0.9, "PASS", 0},
		{"below it", runs(0, 100, 100), runs(0, 79, 100), 0.895, "MISS", 0},
		{"means, not one run", runs(0, 150, 50), runs(0, 60, 140), 1, "PASS", 0},
		{"faster but failing", runs(0, 100, 100), runs(2, 120, 120), 1.2, "MISS", 4},
	} {
		r := cellsC1Row("C1", c.one, c.two)
		if d := r.Ratio - c.ratio; d > 1e-9 || d < -1e-9 || r.Verdict != c.verdict || r.Errors != c.errorsSum {
			t.Errorf("%s: ratio %.3f verdict %s errors %d, want %.3f %s %d", c.name, r.Ratio, r.Verdict, r.Errors, c.ratio, c.verdict, c.errorsSum)
		}
	}
}
