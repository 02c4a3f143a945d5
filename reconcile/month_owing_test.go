package reconcile_test

import (
	"context"
	"testing"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/postings"
)

// overCapture makes a card owe: a hold, the rest of the card's balance
// moved back to funding, then a capture 15 % above the hold (within the
// network's tolerance) that the card cannot pay — a RECEIVABLE line. The
// next day's top-up of the card repays it first (RECEIVABLE_RECOVERY), so
// the debt opens one day and closes another.
func (mo *month) overCapture(t *testing.T, sh *shopRec) {
	t.Helper()
	ctx := context.Background()
	c := sh.cards[mo.rng.IntN(len(sh.cards))]
	minor := mo.amount(c.Currency, 5, 20)
	res, err := mo.l.Network.Authorize(ctx, network.AuthRequest{MessageID: mo.msg(), CardNo: c.CardNo, Amount: minor,
		Currency: c.Currency, MerchantName: "Hotel", MCC: "7011", MerchantCountry: "DE"})
	if err != nil || !res.Approved {
		mo.stats["over-capture hold declined"]++
		return
	}
	mo.tick(t)
	left, err := mo.l.Balance(ctx, postings.CardAccount(sh.m.ID, postings.AccountCardAvailable, c.Currency, c.CardNo))
	if err != nil {
		t.Fatal(err)
	}
	if left > 0 {
		if _, err := mo.l.Cards.Transfer(ctx, sh.m.ID, cards.TransferInput{CardNo: c.CardNo, Currency: c.Currency, Amount: left,
			Direction: cards.DirectionOut}, nil); err != nil {
			t.Fatalf("emptying the card: %v", err)
		}
		mo.tick(t)
	}
	amt := minor * 115 / 100
	msg := mo.msg()
	if _, err := mo.l.Network.Clear(ctx, network.ClearRequest{MessageID: msg, AuthID: res.AuthID, Amount: amt}); err != nil {
		t.Fatalf("over-capture: %v", err)
	}
	mo.clearings = append(mo.clearings, clearingRec{msg: msg, auth: res.AuthID, cur: c.Currency, day: mo.day(), minor: amt})
	mo.stats["receivable"]++
	sh.owing = c
	mo.tick(t)
}

// repay tops up the card that owes, the day after.
func (mo *month) repay(t *testing.T, sh *shopRec) {
	t.Helper()
	c := sh.owing
	sh.owing = nil
	if _, err := mo.l.Cards.Transfer(context.Background(), sh.m.ID, cards.TransferInput{CardNo: c.CardNo, Currency: c.Currency,
		Amount: mo.amount(c.Currency, 10, 30), Direction: cards.DirectionIn}, nil); err != nil {
		t.Fatalf("repaying the receivable: %v", err)
	}
	mo.stats["receivable recovered"]++
	mo.tick(t)
}
