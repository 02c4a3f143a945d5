package audit_test

import (
	"context"
	"testing"

	"github.com/paygate/gateway/internal/gatewaytest"
)

// A merchant moved into a cell from a later one keeps its entries' ids
// (cell 2's range); its entries made afterwards have the cell's own,
// lower ids: verify passes. Before, it reported every such merchant as
// "stored out of order … one was stored again" (chaos movekill, a
// merchant moved from b2 to a1).
func TestVerifyMerchantMovedInFromALaterCell(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := gatewaytest.New(t, nil, gatewaytest.Options{})
	l := g.Ledger
	m := newMerchant(t, l, "USD")
	setval := func(at int64) {
		t.Helper()
		if _, err := l.DB().ExecContext(ctx, "select setval(pg_get_serial_sequence('entries', 'id'), ?, false)", at); err != nil {
			t.Fatal(err)
		}
	}
	setval(2_000_000_000_000) // minted in cell 2, then moved
	deposit(t, l, m.ID, "USD", 1_00)
	deposit(t, l, m.ID, "USD", 2_00)
	setval(1_000_000_000_000) // made in cell 1 after the move
	deposit(t, l, m.ID, "USD", 3_00)
	mustVerify(t, l)
}
