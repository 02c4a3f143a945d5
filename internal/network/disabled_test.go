package network_test

import (
	"context"
	"testing"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
)

// A disabled merchant's cards are declined 05 (docs/network.md,
// "Authorization"); what was approved before the disable still clears,
// reverses and is refunded, as a network requires of an issuer; enabled
// again, its cards are approved again. Nothing moves on the decline.
func TestDisabledMerchantsCardsAreDeclined(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newNetworkFixture(t, 100_00)
	open := f.authorize(t, 10_00, "USD")
	if err := f.l.Merchants.SetMerchantStatus(ctx, f.m.ID, merchant.Disabled); err != nil {
		t.Fatal(err)
	}
	avail, held := f.balances(t)
	if r := f.authorize(t, 1_00, "USD"); r.Approved || r.Code != network.RespDoNotHonour || r.Reason != "do not honour: the card's merchant is disabled" {
		t.Fatalf("disabled merchant's card: %+v", r)
	}
	if a, h := f.balances(t); a != avail || h != held {
		t.Fatalf("a decline moved money: available %d→%d held %d→%d", avail, a, held, h)
	}
	if res, err := f.l.Network.Clear(ctx, network.ClearRequest{MessageID: f.msg(), AuthID: open.AuthID, Amount: 10_00}); err != nil || res.Captured != 10_00 {
		t.Fatalf("clearing an approval made before the disable: %+v %v", res, err)
	}
	if r, err := f.l.Network.Refund(ctx, network.RefundRequest{MessageID: f.msg(), CardNo: f.card.CardNo, Amount: 1_00, Currency: "USD"}); err != nil || r.Credited != "card" {
		t.Fatalf("refund to a disabled merchant's card: %+v %v", r, err)
	}
	if err := f.l.Merchants.SetMerchantStatus(ctx, f.m.ID, merchant.Active); err != nil {
		t.Fatal(err)
	}
	if r := f.authorize(t, 1_00, "USD"); !r.Approved {
		t.Fatalf("enabled again: %+v", r)
	}
	mustVerify(t, f.l)
}
