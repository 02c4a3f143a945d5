package cells

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/ledger/pgtest"
)

// TestShopNo is the merchant the directory's tests place (id
// TestMerchantID), in the first cell they register.
const (
	TestShopNo     = "SH1000000001"
	TestMerchantID = 1_000_000_000_001
)

// PlacedDirectoryForTest is where the directory's tests start: a directory
// on a new database with cellNames registered, numbered in turn, and
// TestShopNo placed in the first. Defined in a test file of the package so
// that the package's tests and cells_test's share it.
func PlacedDirectoryForTest(t *testing.T, cellNames ...string) (*bun.DB, *Directory) {
	t.Helper()
	ctx := context.Background()
	db := pgtest.NewDB(t)
	d := NewDirectory(db)
	for _, n := range cellNames {
		if _, err := d.Register(ctx, n, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Place(ctx, Entry{ShopNo: TestShopNo, MerchantID: TestMerchantID, Cell: cellNames[0]}); err != nil {
		t.Fatal(err)
	}
	return db, d
}
