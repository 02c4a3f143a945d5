package merchant_test

import (
	"context"
	"testing"

	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/merchant"
)

// A cell a merchant moved into holds that merchant with its id from the
// cell it came from (internal/cellmove keeps ids): the cell still starts
// (CheckIDsInCell), `cells init` still runs on it and keeps minting in its
// own range (StartIDsInCell), even when the merchant came from a cell of a
// higher number. Before, both refused such a cell (chaos `move`: serve and
// audit verify over cells failed on b2 after a merchant of a1 moved in). A
// merchant in no cell's range (a database from before cells) is still
// refused by both.
func TestIDsInCellAfterAMoveIn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := gatewaytest.New(t, nil, gatewaytest.Options{})
	db := g.DB()
	create := func() int64 {
		t.Helper()
		return gatewaytest.Merchant(t, g.Merchants, "USD").ID
	}
	// A merchant minted by cell 3, then the database made cell 1's: as if
	// the merchant had moved from c3 into a1.
	if err := merchant.StartIDsInCell(ctx, db, 3); err != nil {
		t.Fatal(err)
	}
	moved := create()
	if err := merchant.StartIDsInCell(ctx, db, 1); err != nil {
		t.Fatalf("cells init of a cell holding a merchant of cell 3: %v", err)
	}
	own := create()
	if own != merchant.CellIDSpan || moved != 3*merchant.CellIDSpan {
		t.Fatalf("ids %d and %d, want cell 1's first and cell 3's first", own, moved)
	}
	if err := merchant.CheckIDsInCell(ctx, db, 1); err != nil {
		t.Errorf("a cell holding a merchant moved in: %v", err)
	}
	// Init again: the sequence stays after the last merchant minted here,
	// not after the moved-in one of cell 3.
	if err := merchant.StartIDsInCell(ctx, db, 1); err != nil {
		t.Fatalf("cells init again: %v", err)
	}
	if next := create(); next != own+1 {
		t.Errorf("the next merchant minted is %d, want %d", next, own+1)
	}
	// A merchant in no cell's range is refused, as before.
	if _, err := db.ExecContext(ctx, "select setval('merchants_id_seq', 5)"); err != nil {
		t.Fatal(err)
	}
	create()
	if err := merchant.StartIDsInCell(ctx, db, 1); err == nil {
		t.Error("cells init of a database with a merchant in no cell's range succeeded")
	}
	if _, err := db.ExecContext(ctx, "select setval('merchants_id_seq', ?)", merchant.CellIDSpan+10); err != nil {
		t.Fatal(err)
	}
	if err := merchant.CheckIDsInCell(ctx, db, 1); err == nil {
		t.Error("a cell with a merchant in no cell's range passed the check")
	}
}
