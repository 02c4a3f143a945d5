package ledger

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/paygate/gateway/postings"
)

// Collecting each check's problems apart and merging them in order lists
// and counts exactly what adding them all one by one to the report would.
func TestProblemListsMergeAsOneReport(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		var want Report
		lists := make([]problemList, 1+r.IntN(5))
		for i := range lists {
			n := r.IntN(3 * ProblemsMax / 2)
			if r.IntN(3) > 0 {
				n = r.IntN(20)
			}
			for j := 0; j < n; j++ {
				p := Problem{Check: fmt.Sprint(i), Seq: int64(j + 1)}
				lists[i].add(p)
				want.add(p)
			}
		}
		var got Report
		for _, l := range lists {
			got.merge(l)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: merged %d problems + %d omitted, one by one %d + %d",
				round, len(got.Problems), got.ProblemsOmitted, len(want.Problems), want.ProblemsOmitted)
		}
	}
}

// Postings that arrive out of idx order are hashed in idx order.
func TestSortPostingsByIdx(t *testing.T) {
	idx := []int16{3, 0, 2, 1}
	ps := []postings.Posting{{Amount: 3}, {Amount: 0}, {Amount: 2}, {Amount: 1}}
	sortPostingsByIdx(idx, ps)
	for i := range ps {
		if idx[i] != int16(i) || ps[i].Amount != int64(i) {
			t.Fatalf("sorted: %v %+v", idx, ps)
		}
	}
}

// The interner returns equal strings, and stays bounded.
func TestInternerIsBounded(t *testing.T) {
	var in interner
	for i := 0; i < 3*internedMax; i++ {
		b := fmt.Appendf(nil, "crd_%d", i)
		if s := in.get(b); s != string(b) {
			t.Fatalf("get(%s) = %s", b, s)
		}
		if len(in) > internedMax {
			t.Fatalf("%d strings kept", len(in))
		}
	}
	first := in.get([]byte("USD"))
	if in.get(nil) != "" || first != "USD" || in.get([]byte("USD")) != first {
		t.Fatal("get")
	}
}
