package network_test

import (
	"context"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/postings"
)

// A refund keeps the network's message id (issue 29 point 1, refunds from
// the network): two equal refunds on one card and day are told apart by
// it in the journal, the bill (txId) and the reconciliation's reads, and a
// refund replayed after its idempotency key expired is refused, not
// booked twice.
func TestRefundKeepsTheNetworksMessageID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newNetworkFixture(t, 100_00)
	a := f.authorize(t, 30_00, "USD")
	if _, err := f.l.Network.Clear(ctx, network.ClearRequest{MessageID: f.msg(), AuthID: a.AuthID, Amount: 30_00}); err != nil {
		t.Fatal(err)
	}
	refund := func(id string) (*network.RefundResult, error) {
		return f.l.Network.Refund(ctx, network.RefundRequest{MessageID: id, CardNo: f.card.CardNo, Amount: 5_00, Currency: "USD"})
	}
	for _, id := range []string{"net-refund-1", "net-refund-2"} {
		r, err := refund(id)
		if err != nil {
			t.Fatal(err)
		}
		if r.MessageID != id {
			t.Errorf("refund %s answered messageId %q", id, r.MessageID)
		}
	}
	// The card.refunded callbacks name the message id too, so a merchant
	// can match them to the bill's txId.
	var eventIDs []string
	if err := f.l.DB().NewRaw(`select payload #>> '{data,messageId}' from events where event_type = ? order by event_seq`,
		network.EventCardRefund).Scan(ctx, &eventIDs); err != nil {
		t.Fatal(err)
	}
	if len(eventIDs) != 2 || eventIDs[0] != "net-refund-1" || eventIDs[1] != "net-refund-2" {
		t.Errorf("card.refunded events' messageId %q, want [net-refund-1 net-refund-2]", eventIDs)
	}
	// A replay inside the TTL answers the first refund and books nothing.
	if r, err := refund("net-refund-1"); err != nil || r.Available != 75_00 {
		t.Fatalf("replay: %+v %v, want the first answer (available 75.00)", r, err)
	}
	if avail, _ := f.balances(t); avail != 80_00 {
		t.Fatalf("available %d after two refunds and a replay, want 80.00", avail)
	}

	// The bill: one CARD_REFUND line per refund, each with its message id.
	var txIDs []string
	seqOf := map[string]int64{}
	for _, l := range allBillLines(t, f.l, f.m.ID) {
		if l.Kind == postings.KindCardRefund {
			txIDs = append(txIDs, l.TxID)
			seqOf[l.TxID] = l.MerchantSeq
		}
	}
	if len(txIDs) != 2 || txIDs[0] != "net-refund-1" || txIDs[1] != "net-refund-2" {
		t.Fatalf("CARD_REFUND lines' txId %q, want [net-refund-1 net-refund-2]", txIDs)
	}

	// The reconciliation's reads: by message id and by period.
	got, err := f.l.Network.RefundsByMessage(ctx, []string{"net-refund-2", "net-unknown", "net-refund-1"})
	if err != nil || len(got) != 3 {
		t.Fatalf("RefundsByMessage: %+v %v", got, err)
	}
	for i, want := range []string{"net-refund-2", "", "net-refund-1"} {
		g := got[i]
		if g.Found != (want != "") || (want != "" && (g.Seq != seqOf[want] || g.Amount != 5_00 || g.Currency != "USD" ||
			g.CardNo != f.card.CardNo || g.ShopNo != f.m.ShopNo || g.Test || g.EntryID == 0)) {
			t.Errorf("RefundsByMessage[%d] = %+v, want %q (seq %d)", i, g, want, seqOf[want])
		}
	}
	now := *f.now.Load()
	between, err := f.l.Network.RefundsBetween(ctx, now.Add(-time.Hour), now.Add(time.Hour), network.SettlementCursor{}, 0)
	if err != nil || len(between) != 2 || between[0].MessageID != "net-refund-1" || between[1].MessageID != "net-refund-2" {
		t.Fatalf("RefundsBetween: %+v %v", between, err)
	}

	// After the TTL the message id is still kept: refused, nothing moves.
	avail, _ := f.balances(t)
	f.advance(72 * time.Hour)
	_, err = refund("net-refund-1")
	wantCode(t, err, postings.ECONFLICT, postings.ReasonMessageID)
	if after, _ := f.balances(t); after != avail {
		t.Fatalf("a replayed refund moved the card: %d → %d", avail, after)
	}
	mustVerify(t, f.l)
}

// A test merchant's refund comes from its sandbox, never from the network:
// the read by message id flags it, the read by period leaves it out.
func TestRefundReadsFlagTestMerchants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newNetworkFixture(t, 100_00)
	test, _, err := f.l.CreateMerchant(ctx, merchant.Spec{Name: "Sandbox", Currencies: []string{"USD"}, Test: true})
	if err != nil {
		t.Fatal(err)
	}
	deposit(t, f.l, test.ID, "USD", 1_000_00)
	card, err := f.l.Cards.CreateCard(ctx, test.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 100_00}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := f.l.Network.Authorize(ctx, network.AuthRequest{MessageID: f.msg(), CardNo: card.CardNo, Amount: 10_00, Currency: "USD"})
	if err != nil || !a.Approved {
		t.Fatalf("authorize: %+v %v", a, err)
	}
	if _, err := f.l.Network.Clear(ctx, network.ClearRequest{MessageID: f.msg(), AuthID: a.AuthID, Amount: 10_00}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.l.Network.Refund(ctx, network.RefundRequest{MessageID: "sbx-refund", CardNo: card.CardNo, Amount: 1_00, Currency: "USD"}); err != nil {
		t.Fatal(err)
	}
	got, err := f.l.Network.RefundsByMessage(ctx, []string{"sbx-refund"})
	if err != nil || len(got) != 1 || !got[0].Found || !got[0].Test || got[0].ShopNo != test.ShopNo {
		t.Fatalf("RefundsByMessage: %+v %v, want found, test, shop %s", got, err, test.ShopNo)
	}
	now := *f.now.Load()
	between, err := f.l.Network.RefundsBetween(ctx, now.Add(-time.Hour), now.Add(time.Hour), network.SettlementCursor{}, 1)
	if err != nil || len(between) != 0 {
		t.Fatalf("RefundsBetween: %+v %v, want none (a test merchant's)", between, err)
	}
}
