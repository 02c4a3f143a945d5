package network_test

import (
	"context"
	"testing"
	"time"
)

// A merchant still arriving in this cell by a move (internal/cellmove:
// its copy not yet switched) has no hold expired here: its source expires
// it until the switch, and a release written here meanwhile would be an
// entry the source lacks, failing the move's verification. Arrived, the
// hold expires here as any.
func TestExpirySkipsAnArrivingMerchant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newNetworkFixture(t, 100_00)
	f.authorize(t, 30_00, "USD")
	f.advance(8 * 24 * time.Hour)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := f.l.DB().ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec("insert into cellmove_arrivals (merchant_id, shop_no, from_cell, state) values (?, ?, 'a1', 'copying')", f.m.ID, f.m.ShopNo)
	if n, err := f.l.Network.ExpireHolds(ctx, 0); err != nil || n != 0 {
		t.Fatalf("expired %d holds of an arriving merchant (%v), want none", n, err)
	}
	exec("update cellmove_arrivals set state = 'arrived' where merchant_id = ?", f.m.ID)
	if n, err := f.l.Network.ExpireHolds(ctx, 0); err != nil || n != 1 {
		t.Fatalf("expired %d holds of the arrived merchant (%v), want its one", n, err)
	}
}
