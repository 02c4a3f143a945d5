package cells_test

import (
	"context"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/cells"
	"github.com/paygate/gateway/ledger/pgtest"
)

// The directory numbers cells once, places each merchant once, and sends
// a new merchant to the cell with the fewest.
func TestDirectory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := cells.NewDirectory(pgtest.NewDB(t))
	for _, tc := range []struct {
		name   string
		ask    int
		want   int
		errHas string
	}{
		{"a1", 0, 1, ""},
		{"b2", 0, 2, ""},
		{"a1", 0, 1, ""},                       // registered: its number again
		{"a1", 3, 1, "registered as number 1"}, // and no other
		{"c3", 3, 3, ""},
		{"d4", 2, 0, "registering cell d4"}, // 2 is b2's
		{"X", 0, 0, "cell name"},
	} {
		got, err := d.Register(ctx, tc.name, tc.ask)
		if (tc.errHas == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.errHas)) || (tc.want != 0 && got != tc.want) {
			t.Errorf("Register(%s, %d) = %d, %v; want %d, %q", tc.name, tc.ask, got, err, tc.want, tc.errHas)
		}
	}
	if cs, err := d.Cells(ctx); err != nil || len(cs) != 3 || cs["c3"] != 3 {
		t.Errorf("Cells: %v %v", cs, err)
	}

	e := cells.Entry{ShopNo: "SH1000000001", MerchantID: 1_000_000_000_000, Cell: "a1"}
	if err := d.Place(ctx, e); err != nil {
		t.Fatal(err)
	}
	for _, dup := range []cells.Entry{
		{ShopNo: e.ShopNo, MerchantID: 2_000_000_000_000, Cell: "b2"},       // the shop number again
		{ShopNo: "SH2000000001", MerchantID: e.MerchantID, Cell: "b2"},      // the merchant id again
		{ShopNo: "SH9000000001", MerchantID: 9_000_000_000_000, Cell: "z9"}, // no such cell
	} {
		if err := d.Place(ctx, dup); err == nil {
			t.Errorf("Place(%+v) succeeded", dup)
		}
	}
	got, ok, err := d.Lookup(ctx, e.ShopNo)
	if err != nil || !ok || got.Cell != "a1" || got.MerchantID != e.MerchantID || got.State != cells.StateActive {
		t.Errorf("Lookup: %+v %v %v", got, ok, err)
	}
	if _, ok, err := d.Lookup(ctx, "SH0000000000"); ok || err != nil {
		t.Errorf("Lookup of an unknown shop: %v %v", ok, err)
	}
	// a1 has one merchant, b2 and c3 none: b2 (the lower number).
	if name, err := d.Emptiest(ctx, []string{"a1", "b2", "c3"}); err != nil || name != "b2" {
		t.Errorf("Emptiest: %s %v", name, err)
	}
	if name, err := d.Emptiest(ctx, []string{"a1"}); err != nil || name != "a1" {
		t.Errorf("Emptiest of a1 alone: %s %v", name, err)
	}
	if _, err := d.Emptiest(ctx, []string{"q7"}); err == nil || !strings.Contains(err.Error(), "cells init") {
		t.Errorf("Emptiest of unregistered cells: %v", err)
	}
}

// A move is recorded from its start to its end: the merchant moving
// meanwhile, then active in the target (switched) or the source (rolled
// back); one open move per merchant.
func TestMoveRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, d := cells.PlacedDirectoryForTest(t, "a1", "b2")
	const shop = cells.TestShopNo
	where := func() (string, string) {
		t.Helper()
		e, _, err := d.Lookup(ctx, shop)
		if err != nil {
			t.Fatal(err)
		}
		return e.Cell, e.State
	}
	if err := d.BeginMove(ctx, shop, "a1"); err == nil {
		t.Error("a move to the merchant's own cell began")
	}
	if err := d.FinishMove(ctx, shop, true); err == nil {
		t.Error("a move finished that never began")
	}
	for _, tc := range []struct {
		switched  bool
		wantCell  string
		moveTo    string
		moveCount int
	}{{false, "a1", "b2", 1}, {true, "b2", "b2", 2}, {true, "a1", "a1", 3}} {
		if err := d.BeginMove(ctx, shop, tc.moveTo); err != nil {
			t.Fatal(err)
		}
		if _, state := where(); state != cells.StateMoving {
			t.Errorf("during the move: %s", state)
		}
		if err := d.BeginMove(ctx, shop, tc.moveTo); err == nil {
			t.Error("a second move began while one is open")
		}
		if err := d.FinishMove(ctx, shop, tc.switched); err != nil {
			t.Fatal(err)
		}
		if cell, state := where(); cell != tc.wantCell || state != cells.StateActive {
			t.Errorf("after the move (switched %v): %s %s, want %s active", tc.switched, cell, state, tc.wantCell)
		}
		var n int
		if err := db.NewRaw("select count(*) from cell_moves where shop_no = ? and finished_at is not null and outcome is not null", shop).
			Scan(ctx, &n); err != nil || n != tc.moveCount {
			t.Errorf("finished moves recorded: %d %v, want %d", n, err, tc.moveCount)
		}
	}
}
