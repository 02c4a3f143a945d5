package cellmove

import (
	"context"
	"testing"
	"time"
)

// An authorization declined during a real move's pause is recorded at the
// source once, however often the network repeats it, and stays listed
// under the merchant's shop number after the move; no decline is
// recorded for a card that is not paused, before the pause or after the
// switch.
func TestDeclinesRecordedInThePause(t *testing.T) {
	c := newTwoCells(t)
	ctx := context.Background()
	business(t, c.g, c.m.ID)
	var card string
	if err := c.src.NewRaw("select card_no from cards where merchant_id = ?", c.m.ID).Scan(ctx, &card); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	decline := Decline{MessageID: "net-1", CardNo: card, Amount: 12_50, Currency: "USD", DeclinedAt: at}
	record := func(when string, d Decline, want bool) {
		t.Helper()
		if paused, err := RecordDecline(ctx, c.src, d); err != nil || paused != want {
			t.Errorf("%s: RecordDecline(%s) = %v %v, want %v", when, d.CardNo, paused, err, want)
		}
	}
	record("before the move", decline, false)
	c.mv.step = func(name string) {
		if name != "tail" { // the pause is committed: the cards are paused
			return
		}
		record("in the pause", decline, true)
		record("the network's repeat", decline, true)
		other := decline
		other.CardNo = "crd_nosuchcard000000000"
		record("another card", other, false)
	}
	res, err := c.mv.Move(ctx, c.m.ShopNo)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Declined) != 1 || res.Declined[0].MessageID != "net-1" {
		t.Errorf("the move's result names the declines %+v", res.Declined)
	}
	after := decline
	after.MessageID = "net-2"
	record("after the switch", after, false)
	got, err := Declines(ctx, c.src, c.m.ShopNo)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ShopNo != c.m.ShopNo || got[0].MessageID != "net-1" || got[0].CardNo != card ||
		got[0].Amount != 12_50 || got[0].Currency != "USD" || got[0].Code != "91" || !got[0].DeclinedAt.Equal(at) || got[0].MoveID == 0 {
		t.Errorf("declines after the move: %+v", got)
	}
	if all, err := Declines(ctx, c.src, ""); err != nil || len(all) != 1 {
		t.Errorf("every merchant's declines: %+v %v", all, err)
	}
	if none, err := Declines(ctx, c.dst, c.m.ShopNo); err != nil || len(none) != 0 {
		t.Errorf("the target's declines: %+v %v", none, err)
	}
}
