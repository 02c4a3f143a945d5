package delivery_test

import (
	"context"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/cards"
)

// A merchant in a move between cells (internal/cellmove) has no delivery
// claimed while it is arriving in a cell (its copy not yet switched) or
// fenced at its source (paused for the move): the cell it ends in sends
// its callbacks. Before, the target's dispatcher sent the copied pending
// callbacks a second time and wrote attempts the source lacked, and the
// move's verification failed for good (chaos movekill).
func TestClaimSkipsAMovingMerchant(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	_, m, _, c := newCapturedShop(t, f, "Moving")
	flip := true
	claimed := func() int {
		t.Helper()
		list, err := f.store.ClaimDeliveries(ctx, 256, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, d := range list {
			if d.MerchantID == m.ID {
				n++
			}
		}
		return n
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := f.l.DB().ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	// Arriving: its card's callback is not claimed; arrived, it is.
	toggle(t, f, m.ID, c.CardNo, &flip)
	exec("insert into cellmove_arrivals (merchant_id, shop_no, from_cell, state) values (?, ?, 'a1', 'copying')", m.ID, m.ShopNo)
	if n := claimed(); n != 0 {
		t.Errorf("%d deliveries of an arriving merchant claimed, want none", n)
	}
	exec("update cellmove_arrivals set state = 'arrived' where merchant_id = ?", m.ID)
	if n := claimed(); n != 1 {
		t.Errorf("%d deliveries of the arrived merchant claimed, want its one", n)
	}
	// Fenced at its source: another card's callback waits until the fence
	// is lifted (a roll-back).
	other, err := f.l.Cards.CreateCard(ctx, m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 1_00}, nil)
	if err != nil {
		t.Fatal(err)
	}
	flip = true
	toggle(t, f, m.ID, other.CardNo, &flip)
	exec("update ledger_heads set cellmove_fenced = true where merchant_id = ?", m.ID)
	if n := claimed(); n != 0 {
		t.Errorf("%d deliveries of a fenced merchant claimed, want none", n)
	}
	exec("update ledger_heads set cellmove_fenced = false where merchant_id = ?", m.ID)
	if n := claimed(); n != 1 {
		t.Errorf("%d deliveries of the merchant claimed after its fence was lifted, want its one", n)
	}
}
