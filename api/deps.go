package api

import (
	"context"
	"time"

	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
)

// What the handlers need, one small interface per area, declared here where
// they are used (the services satisfy them; cmd/gateway wires them, and a
// test may pass a fake). Each handler asks only for its area's interface.

// Merchants authenticates /shop requests (*merchant.Service).
type Merchants interface {
	// Authenticate resolves a shop number and public key; EUNAUTHENTICATED
	// for an unknown shop or a wrong key alike.
	Authenticate(ctx context.Context, shopNo, publicKey string) (*merchant.Merchant, error)
	// TouchAuthenticated records a successful authentication.
	TouchAuthenticated(ctx context.Context, merchant int64, at time.Time) error
}

// Accounts answers GET /shop/account and the BIN list (*cards.Service).
type Accounts interface {
	Profile(ctx context.Context, merchant int64) (*cards.Profile, error)
	MerchantBINs(ctx context.Context, merchant int64) ([]cards.BIN, error)
}

// Cards are the card endpoints (*cards.Service). Errors: ENOTFOUND card,
// ESTATE card_frozen or card_cancelled, EFORBIDDEN currency, bin or
// fx_pair, ELIMIT, EINSUFFICIENT, ECONFLICT (idempotency).
type Cards interface {
	CreateCard(ctx context.Context, merchant int64, in cards.CreateCardInput, idem *ledger.Idempotency) (*cards.Card, error)
	Card(ctx context.Context, merchant int64, cardNo string) (*cards.Card, error)
	Cards(ctx context.Context, merchant int64, cardNos []string) (map[string]*cards.Card, error)
	// ListCards is GET /shop/card/list: EINVALID page or size.
	ListCards(ctx context.Context, merchant int64, f cards.CardFilter, page, size int) (*cards.CardPage, error)
	FreezeCard(ctx context.Context, merchant int64, cardNo, reason string, idem *ledger.Idempotency) (*cards.Card, error)
	UnfreezeCard(ctx context.Context, merchant int64, cardNo string, idem *ledger.Idempotency) (*cards.Card, error)
	CancelCard(ctx context.Context, merchant int64, cardNo string, idem *ledger.Idempotency) (*cards.CancelResult, error)
	Transfer(ctx context.Context, merchant int64, in cards.TransferInput, idem *ledger.Idempotency) (*cards.TransferResult, error)
}

// ReadKeys holds the Idempotency-Key of a read that has no effect (POST
// /shop/card/balance/batch): ECONFLICT when the key belongs to another
// request (*ledger.Ledger).
type ReadKeys interface {
	ClaimReadIdempotency(ctx context.Context, merchant int64, in *ledger.Idempotency) error
}

// Bills exports the merchant's bill (*bill.Service).
type Bills interface {
	Bill(ctx context.Context, merchant int64, from, to time.Time, page, size int) (*bill.Page, error)
	BillRange(ctx context.Context, merchant int64, from, to time.Time) (bill.Range, error)
	BillStream(ctx context.Context, merchant int64, r bill.Range, batch int, fn func([]bill.Line) error) error
	// The filtered bill (type, cardNo, currency): the matches of a range.
	FilteredBill(ctx context.Context, merchant int64, r bill.Range, f bill.Filter, page, size int) (*bill.FilteredPage, error)
	FilteredBillRange(ctx context.Context, merchant int64, r bill.Range, f bill.Filter) (bill.FilteredRange, error)
	FilteredBillStream(ctx context.Context, merchant int64, fr bill.FilteredRange, batch int, fn func([]bill.Line) error) error
	// The balance report of [from, to), one currency or all ("").
	BalanceReport(ctx context.Context, merchant int64, from, to time.Time, currency string) (*bill.BalanceReport, error)
}

// Remittances are the remittance endpoints (*remittance.Service). Errors:
// ENOTFOUND remittance, EFORBIDDEN currency, ELIMIT remittance_max,
// EINSUFFICIENT, ECONFLICT (idempotency).
type Remittances interface {
	CreateRemittance(ctx context.Context, merchant int64, in remittance.RemittanceInput, idem *ledger.Idempotency) (*remittance.Remittance, error)
	Remittance(ctx context.Context, merchant int64, txID string) (*remittance.Remittance, error)
}

// WebhookSettings sets the merchant's default callback URL ("" clears it)
// (*merchant.Service).
type WebhookSettings interface {
	SetCallbackURL(ctx context.Context, merchant int64, url string) error
}

// Webhooks are the merchant's events and their replays (*delivery.Store,
// which the operator's callbacks commands use too). Errors: ENOTFOUND
// event (unknown, or another merchant's), ESTATE no_callback_url.
type Webhooks interface {
	ListEvents(ctx context.Context, merchant int64, q delivery.EventQuery) (*delivery.EventPage, error)
	EventDetail(ctx context.Context, merchant int64, eventID string) (*delivery.EventDetail, error)
	RollWebhookSecret(ctx context.Context, merchant int64, overlap time.Duration) (*delivery.SecretRoll, error)
	ReplayEvent(ctx context.Context, merchant int64, eventID string) (*delivery.DeliveryInfo, error)
	ReplayFailed(ctx context.Context, merchant int64, r delivery.FailedRange) (delivery.ReplayResult, error)
	// WebhookEndpoints: the merchant's endpoints (webhook_endpoints.go).
	WebhookEndpoints
}

// Keys rolls the merchant's keys and tells the overlaps in progress
// (*merchant.Service). Errors: ECONFLICT (idempotency).
type Keys interface {
	RollPublicKey(ctx context.Context, merchant int64, overlap time.Duration, heldPrevious bool, idem *ledger.Idempotency) (*merchant.KeyRoll, error)
	RollSigningKey(ctx context.Context, merchant int64, overlap time.Duration, idem *ledger.Idempotency) (*merchant.KeyRoll, error)
	KeyState(ctx context.Context, merchant int64) (*merchant.KeyState, error)
}

// WriterStats are the ledger writer's counters that /metrics shows
// (*ledger.Ledger).
type WriterStats interface {
	Stats() ledger.Stats
}

var (
	_ Merchants   = (*merchant.Service)(nil)
	_ ReadKeys    = (*ledger.Ledger)(nil)
	_ Bills       = (*bill.Service)(nil)
	_ WriterStats = (*ledger.Ledger)(nil)
	_ Accounts    = (*cards.Service)(nil)
	_ Cards       = (*cards.Service)(nil)
	_ Remittances = (*remittance.Service)(nil)

	_ WebhookSettings = (*merchant.Service)(nil)
	_ Webhooks        = (*delivery.Store)(nil)
	_ Keys            = (*merchant.Service)(nil)
)
