package remittance_test

import (
	"context"
	"strings"
	"testing"

	"github.com/paygate/gateway/ledger"
)

// The sanctions page's summary (moved from the console, issue 28 point 2):
// nothing before a load; then the current version, its size and its first
// entries in the order loaded, bounded; a later load replaces all three.
func TestSanctionsSampleSummarisesTheCurrentList(t *testing.T) {
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	sum, err := l.Remit.SanctionsSample(ctx, 3)
	if err != nil || sum.Version != 0 || sum.Entries != 0 || len(sum.Sample) != 0 {
		t.Fatalf("before a load: %+v, %v; want an empty summary", sum, err)
	}
	for _, load := range []struct{ n, sample int }{{5, 3}, {2, 3}} {
		version, _, err := l.Remit.LoadSanctions(ctx, strings.NewReader(sanctionsCSV(load.n, 0)))
		if err != nil {
			t.Fatal(err)
		}
		sum, err := l.Remit.SanctionsSample(ctx, load.sample)
		if err != nil {
			t.Fatal(err)
		}
		want := min(load.n, load.sample)
		if sum.Version != version || sum.Entries != int64(load.n) || len(sum.Sample) != want {
			t.Fatalf("after loading %d: version %d, %d entries, %d shown; want %d, %d, %d",
				load.n, sum.Version, sum.Entries, len(sum.Sample), version, load.n, want)
		}
		if e := sum.Sample[0]; e.Name != "Entity 1 Holdings" || e.Country != "IR" || e.List != "TEST" || e.Ref != "1" {
			t.Errorf("first entry %+v, want the file's first line", e)
		}
	}
}
