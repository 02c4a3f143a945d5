package cards_test

import (
	"context"
	"crypto/rand"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

func wantCode(t *testing.T, err error, code postings.Code, reason postings.Reason) {
	t.Helper()
	pe := postings.AsError(err)
	if err == nil || pe.Code != code || (reason != "" && pe.Reason != reason) {
		t.Fatalf("got error %v, want %s/%s", err, code, reason)
	}
}

func fundingBalance(t *testing.T, l *gatewaytest.Gateway, m int64, cur string) int64 {
	t.Helper()
	b, err := l.Balance(context.Background(), fund(m, cur))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCardCreateFundsTheCardAndSealsThePAN(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sealer := newSealer(t)
	l := gatewaytest.New(t, nil, gatewaytest.Options{Sealer: sealer})
	m := newMerchant(t, l, "USD", "EUR")
	deposit(t, l, m.ID, "USD", 1_000_00)

	bins, err := l.Cards.MerchantBINs(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(bins) != 4 { // VISA and MASTERCARD in USD and EUR, not GBP
		t.Fatalf("BINs open to a USD+EUR merchant: %+v", bins)
	}
	c, err := l.Cards.CreateCard(ctx, m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 250_00, Remark: "ads"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != cards.CardActive || c.Available != 250_00 || c.Network != "VISA" || len(c.Last4) != 4 ||
		!strings.HasPrefix(c.CardNo, "crd_") || !strings.HasPrefix(c.PanRef, "pan_") {
		t.Fatalf("card %+v", c)
	}
	if got := fundingBalance(t, l, m.ID, "USD"); got != 750_00 {
		t.Fatalf("funding after card: %d", got)
	}
	got, err := l.Cards.Card(ctx, m.ID, c.CardNo)
	if err != nil || got.Available != 250_00 || got.Held != 0 {
		t.Fatalf("Card: %+v %v", got, err)
	}
	// The PAN is stored sealed only: it opens with the data key, is
	// Luhn-valid, starts with the BIN and ends with last4.
	var sealed []byte
	if err := l.DB().NewRaw(`select pan_sealed from cards where card_no = ?`, c.CardNo).Scan(ctx, &sealed); err != nil {
		t.Fatal(err)
	}
	pan, err := sealer.Open(sealed, "pan:"+c.CardNo)
	if err != nil {
		t.Fatal(err)
	}
	if !cards.LuhnValid(string(pan)) || !strings.HasPrefix(string(pan), "453201") || !strings.HasSuffix(string(pan), c.Last4) {
		t.Fatalf("PAN %s", pan)
	}
	if strings.Contains(string(sealed), string(pan)) {
		t.Fatal("the sealed PAN contains the PAN")
	}
	// One card-created event, in the outbox, with the card.
	var events []struct {
		EventType string `bun:"event_type"`
		Payload   string `bun:"payload"`
		Seq       int64  `bun:"event_seq"`
	}
	if err := l.DB().NewRaw(`select event_type, payload::text as payload, event_seq from events where merchant_id = ?`, m.ID).Scan(ctx, &events); err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].EventType != cards.EventCardCreated || events[0].Seq != 1 ||
		!strings.Contains(events[0].Payload, c.CardNo) || !strings.Contains(events[0].Payload, `"balance": 250.00`) {
		t.Fatalf("events %+v", events)
	}
	mustVerify(t, l)
}

func newSealer(t *testing.T) *merchant.Sealer {
	t.Helper()
	key := make([]byte, merchant.DataKeyBytes)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	s, err := merchant.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A new card that draws a PAN already issued gets another one: the batch
// runs again and the caller never hears of it. The unique fingerprint is
// what finds the duplicate, since PANs are stored only sealed.
func TestCardCreateDrawsAgainOnDuplicatePAN(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "USD")
	deposit(t, l, m.ID, "USD", 100_00)
	dup := cards.NewPAN("453201")
	var draws atomic.Int64
	cards.SetPANSource(l.Cards, func(bin string) string {
		if draws.Add(1) <= 2 {
			return dup // the first card's, then the second card's first draw
		}
		return cards.NewPAN(bin)
	})
	for i := 0; i < 2; i++ {
		if _, err := l.Cards.CreateCard(ctx, m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 1_00}, nil); err != nil {
			t.Fatalf("card %d: %v", i+1, err)
		}
	}
	if n := draws.Load(); n != 3 {
		t.Fatalf("%d PAN draws, want 3 (the duplicate drawn again once)", n)
	}
	var cards, fingerprints, entries int
	if err := l.DB().NewRaw(`select count(*), count(distinct pan_fingerprint) from cards`).Scan(ctx, &cards, &fingerprints); err != nil {
		t.Fatal(err)
	}
	if err := l.DB().NewRaw(`select count(*) from entries where kind = 'CARD_FUND'`).Scan(ctx, &entries); err != nil {
		t.Fatal(err)
	}
	if cards != 2 || fingerprints != 2 || entries != 2 {
		t.Fatalf("cards %d, distinct PANs %d, funding entries %d; want 2, 2, 2", cards, fingerprints, entries)
	}
}

// Card creation refuses what it must, with the BIN access and the issuing
// counter prefetched by the batch (CreateCard) and read on demand (the path
// a command takes when it does not ask for the prefetch).
func TestCardCreateRefusals(t *testing.T) {
	t.Parallel()
	for _, path := range []struct {
		name   string
		create func(context.Context, *gatewaytest.Gateway, int64, cards.CreateCardInput) (*cards.Card, error)
	}{
		{"prefetched", func(ctx context.Context, l *gatewaytest.Gateway, m int64, in cards.CreateCardInput) (*cards.Card, error) {
			return l.Cards.CreateCard(ctx, m, in, nil)
		}},
		{"on demand", func(ctx context.Context, l *gatewaytest.Gateway, m int64, in cards.CreateCardInput) (*cards.Card, error) {
			return cards.CreateCardOnDemand(ctx, l.Cards, m, in)
		}},
	} {
		t.Run(path.name, func(t *testing.T) {
			t.Parallel()
			testCardCreateRefusals(t, path.create)
		})
	}
}

func testCardCreateRefusals(t *testing.T, create func(context.Context, *gatewaytest.Gateway, int64, cards.CreateCardInput) (*cards.Card, error)) {
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "USD", "EUR")
	deposit(t, l, m.ID, "USD", 100_000_00)
	if err := l.Cards.SetLimit(ctx, m.ID, "USD", 1_000_00, 1_500_00); err != nil {
		t.Fatal(err)
	}
	closed := false
	if err := l.Cards.SetBINAccess(ctx, m.ID, "522301", "USD", &closed); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		in     cards.CreateCardInput
		code   postings.Code
		reason postings.Reason
	}{
		{"currency not the merchant's", cards.CreateCardInput{Bin: "453203", Currency: "GBP", Amount: 1}, postings.EFORBIDDEN, "currency"},
		{"BIN of another currency", cards.CreateCardInput{Bin: "453201", Currency: "EUR", Amount: 1}, postings.EFORBIDDEN, "bin"},
		{"BIN closed to the merchant", cards.CreateCardInput{Bin: "522301", Currency: "USD", Amount: 1}, postings.EFORBIDDEN, "bin"},
		{"unknown BIN", cards.CreateCardInput{Bin: "999999", Currency: "USD", Amount: 1}, postings.EFORBIDDEN, "bin"},
		{"above the card balance limit", cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 1_000_01}, postings.ELIMIT, "card_balance_max"},
		{"insufficient funds", cards.CreateCardInput{Bin: "453202", Currency: "EUR", Amount: 1_00}, postings.EINSUFFICIENT, ""},
	} {
		_, err := create(ctx, l, m.ID, tt.in)
		if pe := postings.AsError(err); err == nil || pe.Code != tt.code || (tt.reason != "" && pe.Reason != tt.reason) {
			t.Errorf("%s: got %v, want %s/%s", tt.name, err, tt.code, tt.reason)
		}
	}
	// The daily issuing limit counts what was funded today: 1,000 then 500
	// fit in 1,500, one more cent does not.
	for _, amount := range []int64{1_000_00, 500_00} {
		if _, err := create(ctx, l, m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: amount}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := create(ctx, l, m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 1})
	wantCode(t, err, postings.ELIMIT, "daily_card_issue")
	// Nothing of the refused requests is left: two cards, two entries
	// after the deposit, two events.
	var cards, events int
	if err := l.DB().NewRaw(`select count(*) from cards`).Scan(ctx, &cards); err != nil {
		t.Fatal(err)
	}
	if err := l.DB().NewRaw(`select count(*) from events`).Scan(ctx, &events); err != nil {
		t.Fatal(err)
	}
	if cards != 2 || events != 2 {
		t.Fatalf("cards %d events %d", cards, events)
	}
	p, err := l.Cards.Profile(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Limits[0].Currency != "USD" || p.Limits[0].DailyCardIssued != 1_500_00 || p.Balances[0].Balance != 98_500_00 {
		t.Fatalf("profile %+v", p)
	}
	mustVerify(t, l)
}

func TestCardLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "USD")
	other := newMerchant(t, l, "USD")
	deposit(t, l, m.ID, "USD", 1_000_00)
	c, err := l.Cards.CreateCard(ctx, m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 100_00}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Another merchant sees nothing.
	_, err = l.Cards.Card(ctx, other.ID, c.CardNo)
	wantCode(t, err, postings.ENOTFOUND, "card")
	_, err = l.Cards.FreezeCard(ctx, other.ID, c.CardNo, "x", nil)
	wantCode(t, err, postings.ENOTFOUND, "card")
	_, err = l.Cards.Transfer(ctx, other.ID, cards.TransferInput{CardNo: c.CardNo, Amount: 1, Currency: "USD", Direction: "OUT"}, nil)
	wantCode(t, err, postings.ENOTFOUND, "card")

	// Freeze twice: one state change, one event.
	for i := 0; i < 2; i++ {
		got, err := l.Cards.FreezeCard(ctx, m.ID, c.CardNo, "suspected fraud", nil)
		if err != nil || got.Status != cards.CardFrozen || got.FreezeReason != "suspected fraud" {
			t.Fatalf("freeze: %+v %v", got, err)
		}
	}
	_, err = l.Cards.Transfer(ctx, m.ID, cards.TransferInput{CardNo: c.CardNo, Amount: 1_00, Currency: "USD", Direction: "IN"}, nil)
	wantCode(t, err, postings.ESTATE, "card_frozen")
	res, err := l.Cards.Transfer(ctx, m.ID, cards.TransferInput{CardNo: c.CardNo, Amount: 10_00, Currency: "USD", Direction: "OUT"}, nil)
	if err != nil || res.CardBalance != 90_00 || res.FundingBalance != 910_00 || res.FXRate != "" {
		t.Fatalf("OUT from a frozen card: %+v %v", res, err)
	}
	for i := 0; i < 2; i++ {
		got, err := l.Cards.UnfreezeCard(ctx, m.ID, c.CardNo, nil)
		if err != nil || got.Status != cards.CardActive || got.FreezeReason != "" {
			t.Fatalf("unfreeze: %+v %v", got, err)
		}
	}
	if _, err := l.Cards.Transfer(ctx, m.ID, cards.TransferInput{CardNo: c.CardNo, Amount: 5_00, Currency: "USD", Direction: "IN"}, nil); err != nil {
		t.Fatal(err)
	}
	_, err = l.Cards.Transfer(ctx, m.ID, cards.TransferInput{CardNo: c.CardNo, Amount: 95_01, Currency: "USD", Direction: "OUT"}, nil)
	wantCode(t, err, postings.EINSUFFICIENT, "")

	cr, err := l.Cards.CancelCard(ctx, m.ID, c.CardNo, nil)
	if err != nil || cr.Refunded != 95_00 || cr.Card.Status != cards.CardCancelled || cr.Card.CancelledAt == nil || cr.Card.Available != 0 {
		t.Fatalf("cancel: %+v %v", cr, err)
	}
	if got := fundingBalance(t, l, m.ID, "USD"); got != 1_000_00 {
		t.Fatalf("funding after cancel: %d", got)
	}
	// Everything after cancellation is refused.
	_, err = l.Cards.CancelCard(ctx, m.ID, c.CardNo, nil)
	wantCode(t, err, postings.ESTATE, "card_cancelled")
	_, err = l.Cards.FreezeCard(ctx, m.ID, c.CardNo, "", nil)
	wantCode(t, err, postings.ESTATE, "card_cancelled")
	_, err = l.Cards.UnfreezeCard(ctx, m.ID, c.CardNo, nil)
	wantCode(t, err, postings.ESTATE, "card_cancelled")
	_, err = l.Cards.Transfer(ctx, m.ID, cards.TransferInput{CardNo: c.CardNo, Amount: 1, Currency: "USD", Direction: "OUT"}, nil)
	wantCode(t, err, postings.ESTATE, "card_cancelled")

	var types []string
	if err := l.DB().NewRaw(`select event_type from events where merchant_id = ? order by event_seq`, m.ID).Scan(ctx, &types); err != nil {
		t.Fatal(err)
	}
	want := []string{"card.created", "card.frozen", "card.unfrozen", "card.cancelled"}
	if strings.Join(types, ",") != strings.Join(want, ",") {
		t.Fatalf("events %v, want %v", types, want)
	}
	mustVerify(t, l)
}

func TestCrossCurrencyTransfer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Now()
	clock := func() time.Time { return now }
	l := newLedger(t, ledger.Config{Now: func() time.Time { return clock() }})
	m := newMerchant(t, l, "USD", "EUR", "JPY")
	deposit(t, l, m.ID, "USD", 1_000_00)
	if _, err := l.FX.Set(ctx, "USD", "EUR", "0.9", 100); err != nil { // client rate 0.891
		t.Fatal(err)
	}
	if _, err := l.FX.Set(ctx, "EUR", "USD", "1.25", 100); err != nil { // client rate 1.2375
		t.Fatal(err)
	}
	c, err := l.Cards.CreateCard(ctx, m.ID, cards.CreateCardInput{Bin: "453202", Currency: "EUR"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// IN: 100.01 USD × 0.891 = 89.10891 EUR → the card gets 89.10 (down).
	in, err := l.Cards.Transfer(ctx, m.ID, cards.TransferInput{CardNo: c.CardNo, Amount: 100_01, Currency: "USD", Direction: "IN"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if in.CardAmount != 89_10 || in.FXRate != "0.891" || in.MidRate != "0.9" || in.SpreadBps != 100 || in.CardCurrency != "EUR" {
		t.Fatalf("IN %+v", in)
	}
	// OUT: the merchant receives 10.00 USD; the card pays 10 / 1.2375 =
	// 8.0808… EUR → 8.09 (up).
	out, err := l.Cards.Transfer(ctx, m.ID, cards.TransferInput{CardNo: c.CardNo, Amount: 10_00, Currency: "USD", Direction: "OUT"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.CardAmount != 8_09 || out.FXRate != "1.2375" || out.CardBalance != 81_01 || out.FundingBalance != 909_99 {
		t.Fatalf("OUT %+v", out)
	}
	recs, err := audit.New(l.Ledger).EntriesByRef(ctx, m.ID, postings.Refs{TxID: in.TxID})
	if err != nil || len(recs) != 1 || len(recs[0].Postings) != 2 || recs[0].Metadata["fx_rate"] != "0.891" {
		t.Fatalf("IN entry %+v %v", recs, err)
	}
	// No rate for JPY→EUR: refused. A rate older than a day: refused.
	_, err = l.Cards.Transfer(ctx, m.ID, cards.TransferInput{CardNo: c.CardNo, Amount: 100, Currency: "JPY", Direction: "IN"}, nil)
	wantCode(t, err, postings.EFORBIDDEN, "fx_pair")
	now = now.Add(25 * time.Hour)
	_, err = l.Cards.Transfer(ctx, m.ID, cards.TransferInput{CardNo: c.CardNo, Amount: 1_00, Currency: "USD", Direction: "IN"}, nil)
	wantCode(t, err, postings.ESTATE, "fx_rate_stale")
	mustVerify(t, l)
}

func TestCardCommandsAreIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "USD")
	deposit(t, l, m.ID, "USD", 1_000_00)
	key := &ledger.Idempotency{Scope: ledger.ScopeShop, Key: "create-1"}
	in := cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 10_00}
	a, err := l.Cards.CreateCard(ctx, m.ID, in, key)
	if err != nil {
		t.Fatal(err)
	}
	if key.Replayed {
		t.Fatal("a first request reported as a replay")
	}
	again := &ledger.Idempotency{Scope: ledger.ScopeShop, Key: "create-1"}
	b, err := l.Cards.CreateCard(ctx, m.ID, in, again)
	if err != nil || b.CardNo != a.CardNo || b.Available != a.Available || !b.CreatedAt.Equal(a.CreatedAt) || !again.Replayed {
		t.Fatalf("replay %+v %v (replayed %v), first %+v", b, err, again.Replayed, a)
	}
	in.Amount = 11_00
	_, err = l.Cards.CreateCard(ctx, m.ID, in, key)
	wantCode(t, err, postings.ECONFLICT, "idempotency_mismatch")
	if got := fundingBalance(t, l, m.ID, "USD"); got != 990_00 {
		t.Fatalf("funding %d: the replay or the conflict moved money", got)
	}
	// A failure is remembered too: the same key gives the same failure even
	// once the funds are there.
	tk := &ledger.Idempotency{Scope: ledger.ScopeShop, Key: "t-1"}
	tin := cards.TransferInput{CardNo: a.CardNo, Amount: 5_000_00, Currency: "USD", Direction: "IN"}
	_, err = l.Cards.Transfer(ctx, m.ID, tin, tk)
	wantCode(t, err, postings.EINSUFFICIENT, "")
	deposit(t, l, m.ID, "USD", 10_000_00)
	_, err = l.Cards.Transfer(ctx, m.ID, tin, tk)
	wantCode(t, err, postings.EINSUFFICIENT, "")
	mustVerify(t, l)
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	_, creds, err := l.CreateMerchant(ctx, merchant.Spec{Name: "Shop", Currencies: []string{"USD"}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := l.Authenticate(ctx, creds.ShopNo, creds.PublicKey)
	if err != nil || m.ShopNo != creds.ShopNo || m.LastAuthenticatedAt != nil {
		t.Fatalf("authenticate: %+v %v", m, err)
	}
	_, errWrong := l.Authenticate(ctx, creds.ShopNo, creds.PublicKey+"x")
	_, errUnknown := l.Authenticate(ctx, "SH0000000000", creds.PublicKey)
	wantCode(t, errWrong, postings.EUNAUTHENTICATED, "")
	wantCode(t, errUnknown, postings.EUNAUTHENTICATED, "")
	if errWrong.Error() != errUnknown.Error() {
		t.Fatalf("an unknown shop and a wrong key must look alike: %q vs %q", errWrong, errUnknown)
	}
	// The private key does not authenticate.
	_, err = l.Authenticate(ctx, creds.ShopNo, creds.PrivateKey)
	wantCode(t, err, postings.EUNAUTHENTICATED, "")
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	if err := l.TouchAuthenticated(ctx, m.ID, at); err != nil {
		t.Fatal(err)
	}
	p, err := l.Cards.Profile(ctx, m.ID)
	if err != nil || p.LastAuthenticatedAt == nil || !p.LastAuthenticatedAt.Equal(at) || p.KYBTier != cards.KYBTier1 {
		t.Fatalf("profile %+v %v", p, err)
	}
}
