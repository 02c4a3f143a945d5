package cells

import (
	"context"
	"testing"
	"time"
)

// The cache answers from memory for CacheTTL, then asks the directory
// again: a move's switch reaches the router within it. The clock is the
// test's, so a slow machine changes nothing.
func TestCacheForgetsAfterTTL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, d := PlacedDirectoryForTest(t, "a1", "b2")
	now := time.Now()
	c := NewCache(d)
	c.now = func() time.Time { return now }
	lookup := func(shop string) (string, bool) {
		t.Helper()
		e, ok, err := c.Lookup(ctx, shop)
		if err != nil {
			t.Fatal(err)
		}
		return e.Cell, ok
	}
	if cell, ok := lookup("SH1000000001"); !ok || cell != "a1" {
		t.Fatalf("first lookup: %s %v", cell, ok)
	}
	if _, ok := lookup("SH2000000001"); ok {
		t.Fatal("an unknown shop was found")
	}
	// The directory changes (a move's switch, a new merchant).
	if _, err := db.ExecContext(ctx, "update cell_directory set cell = 'b2' where shop_no = 'SH1000000001'"); err != nil {
		t.Fatal(err)
	}
	if err := d.Place(ctx, Entry{ShopNo: "SH2000000001", MerchantID: 2_000_000_000_001, Cell: "b2"}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(CacheTTL - time.Millisecond)
	if cell, _ := lookup("SH1000000001"); cell != "a1" {
		t.Errorf("within the TTL: %s, want the cached a1", cell)
	}
	if _, ok := lookup("SH2000000001"); ok {
		t.Errorf("within the TTL an unknown shop is still unknown")
	}
	now = now.Add(2 * time.Millisecond)
	if cell, _ := lookup("SH1000000001"); cell != "b2" {
		t.Errorf("past the TTL: %s, want b2", cell)
	}
	if cell, ok := lookup("SH2000000001"); !ok || cell != "b2" {
		t.Errorf("past the TTL the new shop: %s %v", cell, ok)
	}
}
