package api

// Fakes of the interfaces of deps.go, for the handler tests (handlers_*_test.go):
// the handlers' decode → call → envelope, and every refusal, checked on
// the gin engine through httptest.NewRecorder — no listener, no TLS, no
// PostgreSQL, so they run in make test-short. These fake our own small
// interfaces, not PostgreSQL: what the services do with a call is tested
// in their own packages and, end to end, by newTestServer's tests.

import (
	"context"
	"sync"
	"time"

	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// The fake merchants' credentials.
const (
	fakeShopNo      = "SH0000000001"
	fakePublicKey   = "pk_fake_live"
	fakeTestShopNo  = "SH0000000002" // a test merchant: the sandbox is open to it
	fakeDisabledNo  = "SH0000000003"
	fakeWhitelistNo = "SH0000000004" // only 198.51.100.0/24 may call; httptest's peer is 192.0.2.1
	fakeMerchantID  = 41
)

// fakeAt is the time of every fixture.
var fakeAt = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// fakeCall is one call a handler made: the method, its decoded input and
// the Idempotency-Key it was given.
type fakeCall struct {
	method   string
	merchant int64
	in       any
	idem     *ledger.Idempotency
}

// fakeServices implements every interface of deps.go. Each call is
// recorded; it answers err when set, else a fixture.
type fakeServices struct {
	mu    sync.Mutex
	calls []fakeCall
	err   error
	// errOn names the one method that answers err; "": every one.
	errOn string
	// replayed marks the Idempotency-Key of a call as the stored answer of
	// an earlier request, as the ledger does.
	replayed bool
	// block, when set, holds each call until it is closed (a request in
	// flight).
	block chan struct{}
	// entered is signalled when a call starts, for block.
	entered chan struct{}
}

func (f *fakeServices) answer(ctx context.Context, method string, merchant int64, in any, idem *ledger.Idempotency) error {
	f.mu.Lock()
	f.calls = append(f.calls, fakeCall{method: method, merchant: merchant, in: in, idem: idem})
	err, block, entered := f.err, f.block, f.entered
	if f.errOn != "" && f.errOn != method {
		err = nil
	}
	if idem != nil && err == nil {
		idem.Replayed = f.replayed
	}
	f.mu.Unlock()
	if entered != nil {
		entered <- struct{}{}
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return err
}

func (f *fakeServices) recorded() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeCall(nil), f.calls...)
}

// Merchants: the fake shops; any other credentials are a wrong key.
func (f *fakeServices) Authenticate(_ context.Context, shopNo, key string) (*merchant.Merchant, error) {
	m := &merchant.Merchant{ID: fakeMerchantID, ShopNo: shopNo, Name: "Fake shop", Currencies: []string{"USD", "EUR"},
		Status: merchant.Active, KYBTier: "STANDARD", CreatedAt: fakeAt, APIVersion: apiVersions.current()}
	if key != fakePublicKey {
		return nil, postings.Errorf(postings.EUNAUTHENTICATED, "wrong key")
	}
	switch shopNo {
	case fakeShopNo:
	case fakeTestShopNo:
		m.Test = true
	case fakeDisabledNo:
		m.Status = merchant.Disabled
	case fakeWhitelistNo:
		m.IPWhitelist = []string{"198.51.100.0/24"}
	default:
		return nil, postings.Errorf(postings.EUNAUTHENTICATED, "unknown shop")
	}
	return m, nil
}

func (f *fakeServices) TouchAuthenticated(context.Context, int64, time.Time) error { return nil }

// Accounts.
func (f *fakeServices) Profile(ctx context.Context, m int64) (*cards.Profile, error) {
	at := fakeAt
	p := &cards.Profile{
		Merchant: merchant.Merchant{ShopNo: fakeShopNo, Name: "Fake shop", Currencies: []string{"USD", "JPY"},
			Status: merchant.Active, CreatedAt: fakeAt},
		KYBTier:             "STANDARD",
		Balances:            []cards.FundingBalance{{Currency: "USD", Balance: 12345}, {Currency: "JPY", Balance: 500}},
		Receivables:         []cards.Receivable{{Currency: "USD", Amount: 0}},
		LastAuthenticatedAt: &at,
	}
	return p, f.answer(ctx, "Profile", m, nil, nil)
}

func (f *fakeServices) MerchantBINs(ctx context.Context, m int64) ([]cards.BIN, error) {
	bins := []cards.BIN{{Bin: "453201", Currency: "USD", Network: "VISA", Type: "VIRTUAL", Enabled: true},
		{Bin: "522222", Currency: "EUR", Network: "MASTERCARD"}}
	return bins, f.answer(ctx, "MerchantBINs", m, nil, nil)
}

// fakeCard is the card every card call answers.
func fakeCard(cardNo string) *cards.Card {
	return &cards.Card{CardNo: cardNo, MerchantID: fakeMerchantID, Bin: "453201", Network: "VISA", Currency: "USD",
		Last4: "4242", ExpiryMonth: 3, ExpiryYear: 2029, PanRef: "pan_1", Status: cards.CardActive,
		Available: 5000, Held: 250, CreatedAt: fakeAt, UpdatedAt: fakeAt}
}

// Cards.
func (f *fakeServices) CreateCard(ctx context.Context, m int64, in cards.CreateCardInput, idem *ledger.Idempotency) (*cards.Card, error) {
	return fakeCard("crd_new"), f.answer(ctx, "CreateCard", m, in, idem)
}

func (f *fakeServices) Card(ctx context.Context, m int64, cardNo string) (*cards.Card, error) {
	return fakeCard(cardNo), f.answer(ctx, "Card", m, cardNo, nil)
}

func (f *fakeServices) Cards(ctx context.Context, m int64, cardNos []string) (map[string]*cards.Card, error) {
	out := map[string]*cards.Card{}
	for _, n := range cardNos {
		if n != "crd_unknown" {
			out[n] = fakeCard(n)
		}
	}
	return out, f.answer(ctx, "Cards", m, cardNos, nil)
}

func (f *fakeServices) ListCards(ctx context.Context, m int64, fl cards.CardFilter, page, size int) (*cards.CardPage, error) {
	in := struct {
		Filter     cards.CardFilter
		Page, Size int
	}{fl, page, size}
	return &cards.CardPage{Total: 7, Cards: []*cards.Card{fakeCard("crd_1")}}, f.answer(ctx, "ListCards", m, in, nil)
}

func (f *fakeServices) FreezeCard(ctx context.Context, m int64, cardNo, reason string, idem *ledger.Idempotency) (*cards.Card, error) {
	return fakeCard(cardNo), f.answer(ctx, "FreezeCard", m, [2]string{cardNo, reason}, idem)
}

func (f *fakeServices) UnfreezeCard(ctx context.Context, m int64, cardNo string, idem *ledger.Idempotency) (*cards.Card, error) {
	return fakeCard(cardNo), f.answer(ctx, "UnfreezeCard", m, cardNo, idem)
}

func (f *fakeServices) CancelCard(ctx context.Context, m int64, cardNo string, idem *ledger.Idempotency) (*cards.CancelResult, error) {
	return &cards.CancelResult{Card: *fakeCard(cardNo)}, f.answer(ctx, "CancelCard", m, cardNo, idem)
}

func (f *fakeServices) Transfer(ctx context.Context, m int64, in cards.TransferInput, idem *ledger.Idempotency) (*cards.TransferResult, error) {
	r := &cards.TransferResult{TxID: "tx_1", CardNo: in.CardNo, Direction: in.Direction, Amount: in.Amount, Currency: in.Currency,
		CardAmount: 1500, CardCurrency: "JPY", FXRate: "150.00", MidRate: "151.50", SpreadBps: 100,
		CardBalance: 1500, FundingBalance: 9000, CreatedAt: fakeAt}
	return r, f.answer(ctx, "Transfer", m, in, idem)
}

// ReadKeys.
func (f *fakeServices) ClaimReadIdempotency(ctx context.Context, m int64, idem *ledger.Idempotency) error {
	if idem == nil {
		return nil // nothing to hold: the handlers call it with or without a key
	}
	return f.answer(ctx, "ClaimReadIdempotency", m, idem.Key, idem)
}

// Bills: an empty bill (its rendering is bill_test.go's).
func (f *fakeServices) Bill(ctx context.Context, m int64, from, to time.Time, page, size int) (*bill.Page, error) {
	in := [4]any{from, to, page, size}
	return &bill.Page{Page: page, Size: size}, f.answer(ctx, "Bill", m, in, nil)
}

func (f *fakeServices) BillRange(ctx context.Context, m int64, from, to time.Time) (bill.Range, error) {
	return bill.Range{}, f.answer(ctx, "BillRange", m, [2]time.Time{from, to}, nil)
}

func (f *fakeServices) BillStream(ctx context.Context, m int64, _ bill.Range, _ int, _ func([]bill.Line) error) error {
	return f.answer(ctx, "BillStream", m, nil, nil)
}

func (f *fakeServices) FilteredBill(ctx context.Context, m int64, _ bill.Range, fl bill.Filter, page, size int) (*bill.FilteredPage, error) {
	return &bill.FilteredPage{Page: page, Size: size}, f.answer(ctx, "FilteredBill", m, fl, nil)
}

func (f *fakeServices) FilteredBillRange(ctx context.Context, m int64, _ bill.Range, fl bill.Filter) (bill.FilteredRange, error) {
	return bill.FilteredRange{}, f.answer(ctx, "FilteredBillRange", m, fl, nil)
}

func (f *fakeServices) FilteredBillStream(ctx context.Context, m int64, _ bill.FilteredRange, _ int, _ func([]bill.Line) error) error {
	return f.answer(ctx, "FilteredBillStream", m, nil, nil)
}

// Remittances and Rails.
func fakeRemittance(txID string) *remittance.Remittance {
	return &remittance.Remittance{TxID: txID, MerchantID: fakeMerchantID, PayerID: "payer-1",
		Beneficiary: []byte(`{"name":"Erika Mustermann","country":"DE","account_no":"DE89370400440532013000"}`),
		Amount:      10000, Fee: 150, Currency: "EUR", Rail: "SEPA", Status: "SCREENING", CreatedAt: fakeAt, UpdatedAt: fakeAt}
}

func (f *fakeServices) CreateRemittance(ctx context.Context, m int64, in remittance.RemittanceInput, idem *ledger.Idempotency) (*remittance.Remittance, error) {
	return fakeRemittance("rmt_new"), f.answer(ctx, "CreateRemittance", m, in, idem)
}

func (f *fakeServices) Remittance(ctx context.Context, m int64, txID string) (*remittance.Remittance, error) {
	return fakeRemittance(txID), f.answer(ctx, "Remittance", m, txID, nil)
}

func (f *fakeServices) ReportRemittance(ctx context.Context, messageID, txID, status, reason string) (*remittance.Remittance, error) {
	return fakeRemittance(txID), f.answer(ctx, "ReportRemittance", 0, [4]string{messageID, txID, status, reason}, nil)
}

// Network.
func (f *fakeServices) Authorize(ctx context.Context, req network.AuthRequest) (*network.AuthResult, error) {
	r := &network.AuthResult{AuthID: "auth_1", Approved: true, Code: "00", Reason: "approved", CardNo: req.CardNo,
		Amount: req.Amount, Currency: req.Currency, CreatedAt: fakeAt}
	return r, f.answer(ctx, "Authorize", 0, req, nil)
}

func (f *fakeServices) Clear(ctx context.Context, req network.ClearRequest) (*network.HoldResult, error) {
	return &network.HoldResult{AuthID: req.AuthID, CardNo: "crd_1", Status: "CLEARED", Currency: "USD", CreatedAt: fakeAt}, f.answer(ctx, "Clear", 0, req, nil)
}

func (f *fakeServices) Reverse(ctx context.Context, req network.ReverseRequest) (*network.HoldResult, error) {
	return &network.HoldResult{AuthID: req.AuthID, CardNo: "crd_1", Status: "REVERSED", Currency: "USD", CreatedAt: fakeAt}, f.answer(ctx, "Reverse", 0, req, nil)
}

func (f *fakeServices) Refund(ctx context.Context, req network.RefundRequest) (*network.RefundResult, error) {
	return &network.RefundResult{CardNo: "crd_1", Currency: "USD", CreatedAt: fakeAt}, f.answer(ctx, "Refund", 0, req, nil)
}

func (f *fakeServices) Authorization(ctx context.Context, authID string) (*network.Authorization, error) {
	owner := int64(fakeMerchantID)
	if authID == "auth_other" {
		owner = fakeMerchantID + 1 // another merchant's
	}
	a := &network.Authorization{AuthID: authID, MerchantID: owner, CardNo: "crd_1", MessageID: "msg_0", Status: "OPEN", TxnAmount: 1000, TxnCurrency: "USD",
		Currency: "USD", Held: 1000, ExpiresAt: fakeAt, CreatedAt: fakeAt, UpdatedAt: fakeAt}
	return a, f.answer(ctx, "Authorization", 0, authID, nil)
}

func (f *fakeServices) AuthAttempts(ctx context.Context, cardNo string, limit int) ([]network.AuthAttempt, error) {
	return nil, f.answer(ctx, "AuthAttempts", 0, [2]any{cardNo, limit}, nil)
}

// WebhookSettings, Webhooks and Keys.
func (f *fakeServices) SetCallbackURL(ctx context.Context, m int64, url string) error {
	return f.answer(ctx, "SetCallbackURL", m, url, nil)
}

func (f *fakeServices) ListEvents(ctx context.Context, m int64, q delivery.EventQuery) (*delivery.EventPage, error) {
	return &delivery.EventPage{}, f.answer(ctx, "ListEvents", m, q, nil)
}

func (f *fakeServices) EventDetail(ctx context.Context, m int64, eventID string) (*delivery.EventDetail, error) {
	d := &delivery.EventDetail{DeliveryInfo: delivery.DeliveryInfo{EventID: eventID, EventType: "card.frozen", EventSeq: 2,
		Status: delivery.DeliveryNotSent, CreatedAt: fakeAt}, Payload: []byte(`{"event_id":"` + eventID + `"}`)}
	return d, f.answer(ctx, "EventDetail", m, eventID, nil)
}

func (f *fakeServices) RollWebhookSecret(ctx context.Context, m int64, overlap time.Duration) (*delivery.SecretRoll, error) {
	return &delivery.SecretRoll{Secret: "whsec_next", RolledAt: fakeAt}, f.answer(ctx, "RollWebhookSecret", m, overlap, nil)
}

func (f *fakeServices) ReplayEvent(ctx context.Context, m int64, eventID string) (*delivery.DeliveryInfo, error) {
	return &delivery.DeliveryInfo{}, f.answer(ctx, "ReplayEvent", m, eventID, nil)
}

func (f *fakeServices) ReplayFailed(ctx context.Context, m int64, r delivery.FailedRange) (delivery.ReplayResult, error) {
	return delivery.ReplayResult{}, f.answer(ctx, "ReplayFailed", m, r, nil)
}

func (f *fakeServices) RollPublicKey(ctx context.Context, m int64, overlap time.Duration, held bool, idem *ledger.Idempotency) (*merchant.KeyRoll, error) {
	return &merchant.KeyRoll{Kind: merchant.KeyPublic, Key: "pk_next", RolledAt: fakeAt}, f.answer(ctx, "RollPublicKey", m, overlap, idem)
}

func (f *fakeServices) RollSigningKey(ctx context.Context, m int64, overlap time.Duration, idem *ledger.Idempotency) (*merchant.KeyRoll, error) {
	return &merchant.KeyRoll{Kind: merchant.KeySigning, Key: "sk_next", RolledAt: fakeAt}, f.answer(ctx, "RollSigningKey", m, overlap, idem)
}

func (f *fakeServices) KeyState(ctx context.Context, m int64) (*merchant.KeyState, error) {
	return &merchant.KeyState{}, f.answer(ctx, "KeyState", m, nil, nil)
}

// WriterStats.
func (f *fakeServices) Stats() ledger.Stats { return ledger.Stats{} }

// The internal API's Network and Rails are partner's interfaces: the plug
// (partner_plug_test.go) refuses a value that does not implement them.
var (
	_ Merchants       = (*fakeServices)(nil)
	_ Accounts        = (*fakeServices)(nil)
	_ Cards           = (*fakeServices)(nil)
	_ ReadKeys        = (*fakeServices)(nil)
	_ Bills           = (*fakeServices)(nil)
	_ Remittances     = (*fakeServices)(nil)
	_ WebhookSettings = (*fakeServices)(nil)
	_ Webhooks        = (*fakeServices)(nil)
	_ Keys            = (*fakeServices)(nil)
	_ WriterStats     = (*fakeServices)(nil)
)
