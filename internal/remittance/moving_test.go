package remittance_test

import (
	"context"
	"testing"
	"time"

	"github.com/paygate/gateway/ledger"
)

// A merchant still arriving in this cell by a move (internal/cellmove)
// has no remittance claimed for its next step here: its source steps it
// until the switch, and a transition written here meanwhile would fail
// the move's verification. Arrived, it is claimed as any.
func TestClaimSkipsAnArrivingMerchant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "EUR")
	deposit(t, l, m.ID, "EUR", 5_000_00)
	r, err := l.Remit.CreateRemittance(ctx, m.ID, remitInput("DE89370400440532013000"), nil)
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := l.DB().ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	claimed := func() int {
		t.Helper()
		due, err := l.Remit.ClaimDueRemittances(ctx, 10, time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, d := range due {
			if d.TxID == r.TxID {
				n++
			}
		}
		return n
	}
	exec("insert into cellmove_arrivals (merchant_id, shop_no, from_cell, state) values (?, ?, 'a1', 'copying')", m.ID, m.ShopNo)
	if n := claimed(); n != 0 {
		t.Errorf("the remittance of an arriving merchant claimed %d times, want never", n)
	}
	exec("update cellmove_arrivals set state = 'arrived' where merchant_id = ?", m.ID)
	if n := claimed(); n != 1 {
		t.Errorf("the remittance of the arrived merchant claimed %d times, want once", n)
	}
}
