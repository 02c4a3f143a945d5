package reconcile

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
)

// The reports' categories come from their counts' JSON fields
// (categoriesOf): each report's list starts with matched, is the JSON's
// order, and is exactly the categories its spec ranks (matched aside),
// so that no category is counted, printed or ordered by a list of its own.
func TestReportCategoriesAreTheCountsJSON(t *testing.T) {
	checkCategories(t, "settlement", &SettlementCounts{}, settlementSpec.rank)
	checkCategories(t, "bank", &BankCounts{}, bankSpec.rank)
	checkCategories(t, "rail", &RailCounts{}, railSpec.rank)
	checkCategories(t, "refund", &RefundCounts{}, refundSpec.rank)
}

// checkCategories checks one report's counts (a pointer) against its rank.
func checkCategories(t *testing.T, name string, counts any, rank map[string]int) {
	t.Run(name, func(t *testing.T) {
		cs := categoriesOf(counts)
		var names []string
		for i, c := range cs {
			*c.n = int64(i + 1)
			names = append(names, c.name)
		}
		if names[0] != CategoryMatched {
			t.Fatalf("categories %v: matched is not first", names)
		}
		js, err := json.Marshal(counts)
		if err != nil {
			t.Fatal(err)
		}
		var back map[string]int64
		if err := json.Unmarshal(js, &back); err != nil || len(back) != len(names) {
			t.Fatalf("JSON %s: %v", js, err)
		}
		for i, n := range names {
			if back[n] != int64(i+1) {
				t.Errorf("%s: JSON %d, counter %d", n, back[n], i+1)
			}
		}
		if ranked := slices.Sorted(maps.Keys(rank)); !slices.Equal(ranked, slices.Sorted(slices.Values(names[1:]))) {
			t.Errorf("ranked %v, counted %v", ranked, names[1:])
		}
		if want := int64(len(names)*(len(names)+1)/2 - 1); toAct(cs) != want {
			t.Errorf("toAct %d, want %d (every count but matched)", toAct(cs), want)
		}
	})
}
