package audit

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/paygate/gateway/internal/testseed"
	"github.com/paygate/gateway/postings"
)

// Collecting each check's problems apart and merging them in order lists
// and counts exactly what adding them all one by one to the report would.
func TestProblemListsMergeAsOneReport(t *testing.T) {
	r := rand.New(rand.NewPCG(testseed.Seed(t, "./internal/audit", "audit.seed", 1), 2))
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

// The fold of the postings gives up, leaving the comparison to the query,
// when it would keep more accounts than allowed or a sum leaves int64's
// range (the query sums in numeric).
func TestBalanceFoldGivesUp(t *testing.T) {
	f := balanceFold{max: 2}
	f.add(1, 5)
	f.add(2, -5)
	f.add(1, 7)
	if f.off || f.sums[1] != 12 || f.sums[2] != -5 {
		t.Fatalf("fold %+v", f)
	}
	f.add(3, 1)
	if !f.off || f.sums != nil {
		t.Fatalf("a third account: %+v", f)
	}
	for _, deltas := range [][]int64{{math.MaxInt64, 1}, {math.MinInt64, -1}, {-5, math.MinInt64}} {
		f := balanceFold{}
		for _, d := range deltas {
			f.add(9, d)
		}
		if !f.off {
			t.Errorf("%v: the fold did not give up: %+v", deltas, f)
		}
	}
	f = balanceFold{}
	f.add(9, math.MaxInt64)
	f.add(9, math.MinInt64)
	if f.off || f.sums[9] != -1 {
		t.Errorf("MaxInt64 + MinInt64: %+v", f)
	}
}

// A merchant's balances in one currency are summed in 128 bits.
func TestInt128Sums(t *testing.T) {
	r := rand.New(rand.NewPCG(testseed.Seed(t, "./internal/audit", "audit.seed", 3), 4))
	for round := 0; round < 200; round++ {
		var x int128
		want := new(big.Int)
		for i := 0; i < 1+r.IntN(50); i++ {
			v := int64(r.Uint64())
			if r.IntN(4) == 0 {
				v = []int64{math.MaxInt64, math.MinInt64, 0, -1, 1}[r.IntN(5)]
			}
			x = x.add(v)
			want.Add(want, big.NewInt(v))
		}
		if x.String() != want.String() || (x == int128{}) != (want.Sign() == 0) {
			t.Fatalf("round %d: %s, want %s", round, x, want)
		}
	}
}
