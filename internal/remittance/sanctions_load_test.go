package remittance_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// sanctionsCSV is a list of n entries, and a malformed line at bad (1-based
// entry number; 0 for none).
func sanctionsCSV(n, bad int) string {
	var b strings.Builder
	b.WriteString("name,country,list,id\n")
	for i := 1; i <= n; i++ {
		if i == bad {
			b.WriteString("Bad Entry,XX,TEST,bad\n") // no such country
			continue
		}
		fmt.Fprintf(&b, "Entity %d Holdings,IR,TEST,%d\n", i, i)
	}
	return b.String()
}

// TestLoadSanctionsStreamsWhole: a load inserts as it reads, batch after
// batch, yet in one transaction: a list of several batches loads whole and
// the worker's index finds every entry; a malformed line after several
// batches were inserted refuses the whole file, naming the line, and the
// list loaded before stays, whole (issue 27, 8e).
func TestLoadSanctionsStreamsWhole(t *testing.T) {
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	version, n, err := l.Remit.LoadSanctions(ctx, strings.NewReader(sanctionsCSV(3500, 0)))
	if err != nil || n != 3500 || version == 0 {
		t.Fatalf("load: version %d, %d entries, %v", version, n, err)
	}
	list, v, err := l.Remit.SanctionsList(ctx)
	if err != nil || v != version || list.Len() != 3500 {
		t.Fatalf("list: version %d (loaded %d), %d entries, %v", v, version, list.Len(), err)
	}
	for _, i := range []int{1, 1000, 1001, 3500} {
		if hit, entry := list.Screen(fmt.Sprintf("ENTITY %d HOLDINGS LTD", i), "IR"); !hit || entry != fmt.Sprintf("TEST:%d Entity %d Holdings (IR)", i, i) {
			t.Errorf("entry %d: %v %q", i, hit, entry)
		}
	}

	_, _, err = l.Remit.LoadSanctions(ctx, strings.NewReader(sanctionsCSV(2600, 2501)))
	if e := postings.AsError(err); err == nil || e.Field != "sanctions_list" || !strings.Contains(e.Message, "line 2502") {
		t.Fatalf("malformed line 2502: %v", err)
	}
	after, v, err := l.Remit.SanctionsList(ctx)
	if err != nil || v != version || after.Len() != 3500 {
		t.Fatalf("after a refused load: version %d (want %d), %d entries, %v", v, version, after.Len(), err)
	}
	var rows int
	if err := l.Ledger.DB().NewRaw(`select count(*) from sanctions_entries`).Scan(ctx, &rows); err != nil || rows != 3500 {
		t.Fatalf("%d rows after a refused load, %v", rows, err)
	}
}
