package network_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// networkFixture is a merchant with one funded USD card.
type networkFixture struct {
	l    *gatewaytest.Gateway
	m    *merchant.Merchant
	card *cards.Card
	now  *atomic.Pointer[time.Time]
	seq  atomic.Int64
}

func newNetworkFixture(t *testing.T, cardMinor int64) *networkFixture {
	t.Helper()
	f := &networkFixture{now: &atomic.Pointer[time.Time]{}}
	start := time.Now().UTC()
	f.now.Store(&start)
	f.l = newLedger(t, ledger.Config{Now: func() time.Time { return *f.now.Load() }})
	f.m = newMerchant(t, f.l, "USD", "EUR")
	deposit(t, f.l, f.m.ID, "USD", 10_000_00)
	var err error
	f.card, err = f.l.Cards.CreateCard(context.Background(), f.m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: cardMinor}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *networkFixture) msg() string { return fmt.Sprintf("msg-%d", f.seq.Add(1)) }

func (f *networkFixture) advance(d time.Duration) {
	t := f.now.Load().Add(d)
	f.now.Store(&t)
}

func (f *networkFixture) authorize(t *testing.T, amount int64, currency string) *network.AuthResult {
	t.Helper()
	res, err := f.l.Network.Authorize(context.Background(), network.AuthRequest{MessageID: f.msg(), CardNo: f.card.CardNo,
		Amount: amount, Currency: currency, MerchantName: "Coffee", MCC: "5814", MerchantCountry: "US"})
	if err != nil {
		t.Fatalf("Authorize: %v", err)
	}
	return res
}

func (f *networkFixture) balances(t *testing.T) (avail, held int64) {
	t.Helper()
	c, err := f.l.Cards.Card(context.Background(), f.m.ID, f.card.CardNo)
	if err != nil {
		t.Fatal(err)
	}
	return c.Available, c.Held
}

func TestAuthorizationDecisions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newNetworkFixture(t, 100_00)
	if r := f.authorize(t, 10_00, "USD"); !r.Approved || r.Code != "00" || r.AuthID == "" || r.Available != 90_00 {
		t.Fatalf("approve: %+v", r)
	}
	if r := f.authorize(t, 90_01, "USD"); r.Approved || r.Code != "51" {
		t.Fatalf("insufficient: %+v", r)
	}
	if _, err := f.l.Cards.FreezeCard(ctx, f.m.ID, f.card.CardNo, "", nil); err != nil {
		t.Fatal(err)
	}
	if r := f.authorize(t, 1_00, "USD"); r.Approved || r.Code != "57" {
		t.Fatalf("frozen: %+v", r)
	}
	if _, err := f.l.Cards.UnfreezeCard(ctx, f.m.ID, f.card.CardNo, nil); err != nil {
		t.Fatal(err)
	}
	if r := f.authorize(t, 1_00, "USD"); !r.Approved {
		t.Fatalf("unfrozen: %+v", r)
	}
	if err := f.l.Cards.SetLimit(ctx, f.m.ID, "USD", 5_00, 1_000_00); err != nil {
		t.Fatal(err)
	}
	if r := f.authorize(t, 5_01, "USD"); r.Approved || r.Code != "61" {
		t.Fatalf("over the limit: %+v", r)
	}
	r, err := f.l.Network.Authorize(ctx, network.AuthRequest{MessageID: f.msg(), CardNo: "crd_nosuchcard0000000000", Amount: 1_00, Currency: "USD"})
	if err != nil || r.Approved || r.Code != "14" {
		t.Fatalf("unknown: %+v %v", r, err)
	}
	// Expiry: three years on, the card's month has passed.
	f.advance(3*366*24*time.Hour + 40*24*time.Hour)
	if _, err := f.l.FX.Set(ctx, "USD", "EUR", "0.9", 0); err != nil { // keep rates fresh for later tests
		t.Fatal(err)
	}
	if r := f.authorize(t, 1_00, "USD"); r.Approved || r.Code != "54" {
		t.Fatalf("expired: %+v", r)
	}
	if _, err := f.l.Cards.CancelCard(ctx, f.m.ID, f.card.CardNo, nil); err != nil {
		t.Fatal(err)
	}
	if r := f.authorize(t, 1_00, "USD"); r.Approved || r.Code != "46" {
		t.Fatalf("cancelled: %+v", r)
	}
	// Every attempt is kept with its code.
	var codes []string
	if err := f.l.DB().NewRaw(`select response_code from auth_attempts order by id`).Scan(ctx, &codes); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(codes) != "[00 51 57 00 61 14 54 46]" {
		t.Fatalf("attempts %v", codes)
	}
	mustVerify(t, f.l)
}

func TestClearingPartialExactAndAbove(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newNetworkFixture(t, 100_00)
	// Partial: 30 held, 20 captured, 10 released.
	a := f.authorize(t, 30_00, "USD")
	res, err := f.l.Network.Clear(ctx, network.ClearRequest{MessageID: f.msg(), AuthID: a.AuthID, Amount: 20_00})
	if err != nil || res.Captured != 20_00 || res.Released != 10_00 || res.Status != network.AuthCleared || res.Available != 80_00 {
		t.Fatalf("partial: %+v %v", res, err)
	}
	// Exact.
	a = f.authorize(t, 30_00, "USD")
	if res, err = f.l.Network.Clear(ctx, network.ClearRequest{MessageID: f.msg(), AuthID: a.AuthID, Amount: 30_00}); err != nil || res.Released != 0 || res.Available != 50_00 {
		t.Fatalf("exact: %+v %v", res, err)
	}
	// Above the hold, above what the card has: the hold, then available,
	// then the receivable. 54.00 on 45.00 is the whole 20 % over-capture
	// tolerance.
	a = f.authorize(t, 45_00, "USD")
	if res, err = f.l.Network.Clear(ctx, network.ClearRequest{MessageID: f.msg(), AuthID: a.AuthID, Amount: 54_00}); err != nil || res.Receivable != 4_00 || res.Available != 0 {
		t.Fatalf("above: %+v %v", res, err)
	}
	avail, held := f.balances(t)
	if avail != 0 || held != 0 {
		t.Fatalf("after over-capture: available %d held %d", avail, held)
	}
	// A top-up repays the receivable first.
	if _, err := f.l.Cards.Transfer(ctx, f.m.ID, cards.TransferInput{CardNo: f.card.CardNo, Amount: 25_00, Currency: "USD", Direction: "IN"}, nil); err != nil {
		t.Fatal(err)
	}
	if avail, _ := f.balances(t); avail != 21_00 {
		t.Fatalf("after top-up: available %d, want 21.00", avail)
	}
	recv, _ := f.l.Balance(ctx, postings.CardAccount(f.m.ID, postings.AccountCardReceivable, "USD", f.card.CardNo))
	if recv != 0 {
		t.Fatalf("receivable %d", recv)
	}
	mustVerify(t, f.l)
}

func TestHoldIsResolvedAtMostOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newNetworkFixture(t, 100_00)
	a := f.authorize(t, 40_00, "USD")
	// A repeated authorization message: the same answer, one hold.
	again, err := f.l.Network.Authorize(ctx, network.AuthRequest{MessageID: "msg-1", CardNo: f.card.CardNo, Amount: 40_00, Currency: "USD",
		MerchantName: "Coffee", MCC: "5814", MerchantCountry: "US"})
	if err != nil || again.AuthID != a.AuthID {
		t.Fatalf("repeat: %+v %v", again, err)
	}
	if _, held := f.balances(t); held != 40_00 {
		t.Fatalf("held %d after a repeated message", held)
	}
	// Partial reversal, then a repeat of it, then a full one, then a
	// second full one and a capture: one effect each, closed after.
	rev := network.ReverseRequest{MessageID: f.msg(), AuthID: a.AuthID, Amount: 10_00}
	for i := 0; i < 2; i++ {
		res, err := f.l.Network.Reverse(ctx, rev)
		if err != nil || res.Released != 10_00 || res.Held != 30_00 || res.Status != network.AuthOpen {
			t.Fatalf("partial reversal %d: %+v %v", i, res, err)
		}
	}
	_, err = f.l.Network.Reverse(ctx, network.ReverseRequest{MessageID: f.msg(), AuthID: a.AuthID, Amount: 30_01})
	wantCode(t, err, postings.EINVALID, "")
	if res, err := f.l.Network.Reverse(ctx, network.ReverseRequest{MessageID: f.msg(), AuthID: a.AuthID}); err != nil || res.Released != 30_00 || res.Status != network.AuthReversed {
		t.Fatalf("full reversal: %+v %v", res, err)
	}
	_, err = f.l.Network.Reverse(ctx, network.ReverseRequest{MessageID: f.msg(), AuthID: a.AuthID})
	wantCode(t, err, postings.ESTATE, "authorization_closed")
	_, err = f.l.Network.Clear(ctx, network.ClearRequest{MessageID: f.msg(), AuthID: a.AuthID, Amount: 1_00})
	wantCode(t, err, postings.ESTATE, "authorization_closed")
	// Double capture: the second one is refused; its repeat replays.
	b := f.authorize(t, 20_00, "USD")
	clr := network.ClearRequest{MessageID: f.msg(), AuthID: b.AuthID, Amount: 20_00}
	first, err := f.l.Network.Clear(ctx, clr)
	if err != nil {
		t.Fatal(err)
	}
	if replay, err := f.l.Network.Clear(ctx, clr); err != nil || replay.Captured != first.Captured || replay.Available != first.Available {
		t.Fatalf("replayed clearing %+v %v", replay, err)
	}
	_, err = f.l.Network.Clear(ctx, network.ClearRequest{MessageID: f.msg(), AuthID: b.AuthID, Amount: 20_00})
	wantCode(t, err, postings.ESTATE, "authorization_closed")
	// One message id used for another message is a conflict.
	_, err = f.l.Network.Reverse(ctx, network.ReverseRequest{MessageID: clr.MessageID, AuthID: b.AuthID})
	wantCode(t, err, postings.ECONFLICT, "idempotency_mismatch")
	if avail, held := f.balances(t); avail != 80_00 || held != 0 {
		t.Fatalf("available %d held %d", avail, held)
	}
	mustVerify(t, f.l)
}

func TestExpiryAndRefunds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newNetworkFixture(t, 100_00)
	a := f.authorize(t, 30_00, "USD")
	b := f.authorize(t, 20_00, "USD")
	f.advance(6 * 24 * time.Hour)
	if n, err := f.l.Network.ExpireHolds(ctx, 0); err != nil || n != 0 {
		t.Fatalf("nothing is due after 6 days: %d %v", n, err)
	}
	f.advance(2 * 24 * time.Hour)
	if _, err := f.l.Network.Clear(ctx, network.ClearRequest{MessageID: f.msg(), AuthID: b.AuthID, Amount: 20_00}); err != nil {
		t.Fatal(err) // a late clearing still captures an open hold
	}
	if n, err := f.l.Network.ExpireHolds(ctx, 0); err != nil || n != 1 {
		t.Fatalf("expired %d %v", n, err)
	}
	if n, _ := f.l.Network.ExpireHolds(ctx, 0); n != 0 {
		t.Fatalf("expired twice: %d", n)
	}
	_, err := f.l.Network.Clear(ctx, network.ClearRequest{MessageID: f.msg(), AuthID: a.AuthID, Amount: 1_00})
	wantCode(t, err, postings.ESTATE, "authorization_closed")
	if avail, held := f.balances(t); avail != 80_00 || held != 0 {
		t.Fatalf("available %d held %d", avail, held)
	}
	// Refund to an active card, then to a cancelled one (the funding
	// account), and an open hold on a cancelled card goes home at expiry.
	if r, err := f.l.Network.Refund(ctx, network.RefundRequest{MessageID: f.msg(), CardNo: f.card.CardNo, Amount: 5_00, Currency: "USD"}); err != nil || r.Credited != "card" || r.Available != 85_00 {
		t.Fatalf("refund: %+v %v", r, err)
	}
	c := f.authorize(t, 15_00, "USD")
	before := fundingBalance(t, f.l, f.m.ID, "USD")
	cr, err := f.l.Cards.CancelCard(ctx, f.m.ID, f.card.CardNo, nil)
	if err != nil || cr.Refunded != 70_00 || cr.Card.Held != 15_00 {
		t.Fatalf("cancel: %+v %v", cr, err)
	}
	if r, err := f.l.Network.Refund(ctx, network.RefundRequest{MessageID: f.msg(), CardNo: f.card.CardNo, Amount: 2_00, Currency: "USD"}); err != nil || r.Credited != "funding" {
		t.Fatalf("refund after cancel: %+v %v", r, err)
	}
	f.advance(8 * 24 * time.Hour)
	if n, err := f.l.Network.ExpireHolds(ctx, 0); err != nil || n != 1 {
		t.Fatalf("expiry after cancel: %d %v", n, err)
	}
	if got := fundingBalance(t, f.l, f.m.ID, "USD"); got != before+70_00+2_00+15_00 {
		t.Fatalf("funding %d, want %d", got, before+87_00)
	}
	_ = c
	mustVerify(t, f.l)
}

func TestCrossBorderAuthorizationFee(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newNetworkFixture(t, 100_00)
	if _, err := f.l.FX.Set(ctx, "EUR", "USD", "1.1", 50); err != nil {
		t.Fatal(err)
	}
	// 10.00 EUR × 1.1 = 11.00 USD, fee 1.5% = 0.165 → 0.17 (up); hold 11.17.
	a := f.authorize(t, 10_00, "EUR")
	if !a.Approved || a.CardAmount != 11_00 || a.Fee != 17 || a.Available != 88_83 {
		t.Fatalf("cross-border authorization %+v", a)
	}
	res, err := f.l.Network.Clear(ctx, network.ClearRequest{MessageID: f.msg(), AuthID: a.AuthID, Amount: 5_00})
	// 5.00 EUR → 5.50 USD, fee 0.0825 → 0.09, released 11.17 − 5.59 = 5.58.
	if err != nil || res.Captured != 5_50 || res.Fee != 9 || res.Released != 5_58 || res.Available != 94_41 {
		t.Fatalf("clearing %+v %v", res, err)
	}
	recs, err := audit.New(f.l.Ledger).EntriesByRef(ctx, f.m.ID, postings.Refs{AuthID: a.AuthID})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []postings.Kind
	for _, r := range recs {
		kinds = append(kinds, r.Kind)
	}
	if fmt.Sprint(kinds) != "[CARD_AUTH CARD_SETTLE FEE CARD_AUTH_RELEASE]" {
		t.Fatalf("entries %v", kinds)
	}
	mustVerify(t, f.l)
}

// 200 concurrent authorizations of 1.00 on a card holding 100.00: exactly
// 100 are approved, and the card never goes below zero.
func TestConcurrentAuthorizations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newNetworkFixture(t, 100_00)
	var approved atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r, err := f.l.Network.Authorize(ctx, network.AuthRequest{MessageID: fmt.Sprintf("c-%d", i), CardNo: f.card.CardNo, Amount: 1_00, Currency: "USD"})
			if err != nil {
				errs <- err
				return
			}
			if r.Approved {
				approved.Add(1)
			} else if r.Code != "51" {
				errs <- fmt.Errorf("decline %s", r.Code)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if approved.Load() != 100 {
		t.Fatalf("%d approvals, want 100", approved.Load())
	}
	if avail, held := f.balances(t); avail != 0 || held != 100_00 {
		t.Fatalf("available %d held %d", avail, held)
	}
	mustVerify(t, f.l)
}

// A network message id reused after its idempotency key expired is refused
// as a conflict (the attempts log keeps every id), not an internal error,
// and changes nothing.
func TestMessageIDReusedAfterTTL(t *testing.T) {
	t.Parallel()
	f := newNetworkFixture(t, 100_00)
	ctx := context.Background()
	req := network.AuthRequest{MessageID: "msg-reused", CardNo: f.card.CardNo, Amount: 10_00, Currency: "USD"}
	if _, err := f.l.Network.Authorize(ctx, req); err != nil {
		t.Fatal(err)
	}
	avail, held := f.balances(t)
	f.advance(72 * time.Hour) // past the 48-hour idempotency TTL
	_, err := f.l.Network.Authorize(ctx, req)
	if pe := postings.AsError(err); err == nil || pe.Code != postings.ECONFLICT || pe.Reason != "message_id" {
		t.Fatalf("reused message id answered %v, want conflict/message_id", err)
	}
	if a, h := f.balances(t); a != avail || h != held {
		t.Fatalf("balances moved: %d/%d → %d/%d", avail, held, a, h)
	}
}
