package archtest

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPrintPackageSizes prints, with -v, every package's non-test Go files and
// lines, its largest file and the median: the sizes docs/architecture.md
// no longer writes by hand, where they went stale. It checks nothing but
// that it could count.
//
//	go test -v -run TestPrintPackageSizes ./internal/archtest
func TestPrintPackageSizes(t *testing.T) {
	total := 0
	for _, p := range modulePackages(t) {
		if len(p.GoFiles) == 0 {
			continue // no non-test Go file
		}
		var sizes []int
		largest, sum := "", 0
		for _, name := range p.GoFiles {
			b, err := os.ReadFile(filepath.Join(p.Dir, name))
			if err != nil {
				t.Fatal(err)
			}
			n := bytes.Count(b, []byte("\n"))
			if len(sizes) == 0 || n > slices.Max(sizes) {
				largest = name
			}
			sizes, sum = append(sizes, n), sum+n
		}
		slices.Sort(sizes)
		t.Logf("%-34s %3d files %6d lines, largest %s (%d), median %d",
			strings.TrimPrefix(p.ImportPath, module), len(sizes), sum, largest, sizes[len(sizes)-1], sizes[len(sizes)/2])
		total += sum
	}
	if total == 0 {
		t.Fatal("counted no line")
	}
	t.Logf("module: %d non-test lines", total)
}
