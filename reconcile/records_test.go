package reconcile_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/paygate/gateway/reconcile"
)

// A run is recorded whole or not at all: when another run holds one of its
// entries (committed since they were checked), nothing of it is recorded
// and the entry is named; the same file twice is one run.
func TestRecordsClaimEachEntryOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	m := f.merchant(t, "USD")
	for range 3 {
		f.deposit(t, m.ID, "USD", 1_00)
	}
	var ids []int64
	if err := f.db.NewRaw(`select id from entries where merchant_id = ? order by id`, m.ID).Scan(ctx, &ids); err != nil || len(ids) < 3 {
		t.Fatalf("entries %v, %v", ids, err)
	}
	rec := reconcile.NewRecords(f.db.DB)
	run := reconcile.Run{Kind: reconcile.KindCardClearing, FileName: "a.csv", From: "2030-03-01", To: "2030-03-01", Actor: "cli:test", Rows: 2}
	shaA, shaB := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	a, err := rec.Record(ctx, run, shaA, []reconcile.RecordedItem{{EntryID: ids[0], Line: 2}, {EntryID: ids[1], Line: 3}})
	if err != nil || a.Run == nil || a.Existing || len(a.Taken) != 0 || a.Run.Items != 2 {
		t.Fatalf("the first run: %+v, %v", a, err)
	}
	run.FileName = "b.csv"
	b, err := rec.Record(ctx, run, shaB, []reconcile.RecordedItem{{EntryID: ids[2], Line: 2}, {EntryID: ids[1], Line: 3}})
	if err != nil || b.Run != nil || len(b.Taken) != 1 || b.Taken[0] != ids[1] {
		t.Fatalf("a second claim: %+v, %v", b, err)
	}
	if got, err := rec.RunByFile(ctx, reconcile.KindCardClearing, shaB); err != nil || got != nil {
		t.Errorf("the refused run was recorded: %+v, %v", got, err)
	}
	claims, err := rec.Claims(ctx, reconcile.KindCardClearing, ids)
	if err != nil || len(claims) != 2 || claims[ids[1]].Run.FileName != "a.csv" || claims[ids[1]].Line != 3 {
		t.Errorf("claims %+v, %v: want a.csv's two", claims, err)
	}
	same, err := rec.Record(ctx, run, shaA, nil)
	if err != nil || !same.Existing || same.Run == nil || same.Run.ID != a.Run.ID {
		t.Errorf("the same file again: %+v, %v", same, err)
	}
	// Evidence is not edited.
	if _, err := f.db.ExecContext(ctx, `delete from reconciled_items`); err == nil {
		t.Error("a record was deleted")
	}
}
