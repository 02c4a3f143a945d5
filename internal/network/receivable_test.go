package network_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/network"
)

// An over-capture shows on the card (Card.Receivable, what it owes) and in
// the merchant's profile (Profile.Receivables, per currency); a later
// top-up repays it and both go back to zero.
func TestReceivableShown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newBoundsFixture(t, 10_00, network.Bounds{})
	a := f.auth(t, f.card.CardNo, 10_00, "USD")
	if _, err := f.clear(a.AuthID, 12_00); err != nil {
		t.Fatal(err)
	}
	c, err := f.l.Cards.Card(ctx, f.m.ID, f.card.CardNo)
	if err != nil || c.Receivable != 2_00 || c.Available != 0 {
		t.Fatalf("card after the over-capture: %+v %v", c, err)
	}
	p, err := f.l.Cards.Profile(ctx, f.m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(p.Receivables) != "[{USD 200} {EUR 0}]" {
		t.Fatalf("profile receivables %v", p.Receivables)
	}
	// The answer of a card command shows it too.
	frozen, err := f.l.Cards.FreezeCard(ctx, f.m.ID, f.card.CardNo, "", nil)
	if err != nil || frozen.Receivable != 2_00 {
		t.Fatalf("freeze answered %+v %v", frozen, err)
	}
	if _, err := f.l.Cards.UnfreezeCard(ctx, f.m.ID, f.card.CardNo, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.l.Cards.Transfer(ctx, f.m.ID, cards.TransferInput{CardNo: f.card.CardNo, Amount: 5_00, Currency: "USD", Direction: "IN"}, nil); err != nil {
		t.Fatal(err)
	}
	if c, _ := f.l.Cards.Card(ctx, f.m.ID, f.card.CardNo); c.Receivable != 0 || c.Available != 3_00 {
		t.Fatalf("card after the top-up: %+v", c)
	}
	if p, _ := f.l.Cards.Profile(ctx, f.m.ID); fmt.Sprint(p.Receivables) != "[{USD 0} {EUR 0}]" {
		t.Fatalf("profile receivables after the top-up %v", p.Receivables)
	}
	mustVerify(t, f.l)
}
