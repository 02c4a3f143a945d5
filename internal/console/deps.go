package console

import (
	"context"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/fx"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// What the pages need from the domains, one small interface per area,
// declared where it is used (as api/deps.go): the console runs the same
// commands as the API and the operator CLI, one implementation behind two
// front ends.

// Ledger is the journal core's part (*ledger.Ledger).
type Ledger interface {
	MerchantByID(ctx context.Context, id int64) (*ledger.Merchant, error)
	MerchantByShopNo(ctx context.Context, shopNo string) (*ledger.Merchant, error)
	CreateMerchant(ctx context.Context, spec ledger.MerchantSpec) (*ledger.Merchant, *ledger.Credentials, error)
	SetMerchantStatus(ctx context.Context, merchant int64, status string) error
	Bill(ctx context.Context, merchant int64, from, to time.Time, page, size int) (*ledger.BillPage, error)
	BillRange(ctx context.Context, merchant int64, from, to time.Time) (ledger.BillRange, error)
	BillStream(ctx context.Context, merchant int64, r ledger.BillRange, batch int, fn func([]ledger.BillLine) error) error
	StatementAccounts(ctx context.Context, merchant int64, from, to time.Time) ([]ledger.StatementAccount, error)
	Entries(ctx context.Context, merchant, from, to int64, limit int) ([]postings.Record, error)
	Verify(ctx context.Context, opts ledger.VerifyOptions) (*ledger.Report, error)
	Now() time.Time
	SetIPWhitelist(ctx context.Context, merchant int64, list []string) error
	// The operator's callback URL, deposit and key roll (the CLI's
	// merchant callback-url, merchant deposit, merchant roll-key).
	SetCallbackURL(ctx context.Context, merchant int64, url string) error
	Deposit(ctx context.Context, merchant int64, currency string, minor int64, idem *ledger.Idempotency) (*postings.Record, error)
	Balance(ctx context.Context, a postings.Account) (int64, error)
	RollPublicKey(ctx context.Context, merchant int64, overlap time.Duration, heldPrevious bool, idem *ledger.Idempotency) (*ledger.KeyRoll, error)
	RollSigningKey(ctx context.Context, merchant int64, overlap time.Duration, idem *ledger.Idempotency) (*ledger.KeyRoll, error)
}

// Cards are the card domain's reads and commands (*cards.Service).
type Cards interface {
	Profile(ctx context.Context, merchant int64) (*cards.Profile, error)
	Card(ctx context.Context, merchant int64, cardNo string) (*cards.Card, error)
	Cards(ctx context.Context, merchant int64, cardNos []string) (map[string]*cards.Card, error)
	FreezeCard(ctx context.Context, merchant int64, cardNo, reason string, idem *ledger.Idempotency) (*cards.Card, error)
	UnfreezeCard(ctx context.Context, merchant int64, cardNo string, idem *ledger.Idempotency) (*cards.Card, error)
	CancelCard(ctx context.Context, merchant int64, cardNo string, idem *ledger.Idempotency) (*cards.CancelResult, error)
	// The operator's (the CLI's merchant kyb, merchant limits, bin add,
	// bin access).
	SetKYBTier(ctx context.Context, merchant int64, tier string) error
	SetLimit(ctx context.Context, merchant int64, currency string, cardBalanceMax, dailyCardIssueMax int64) error
	BINs(ctx context.Context) ([]cards.BIN, error)
	MerchantBINs(ctx context.Context, merchant int64) ([]cards.BIN, error)
	SetBINAccess(ctx context.Context, merchant int64, bin, currency string, allowed *bool) error
	UpsertBIN(ctx context.Context, b cards.BIN) error
}

// Deliveries are the webhook events and their replay (*delivery.Store).
type Deliveries interface {
	DeliveriesInOrder(ctx context.Context, merchant int64, status string, order delivery.Order, limit int) ([]delivery.DeliveryInfo, error)
	ReplayEvent(ctx context.Context, merchant int64, eventID string) (*delivery.DeliveryInfo, error)
	Event(ctx context.Context, merchant int64, eventID string) (*delivery.DeliveryInfo, error)
	Attempts(ctx context.Context, merchant int64, eventID string, limit int) ([]delivery.Attempt, error)
}

// Remittances are the remittance domain's reads (*remittance.Service):
// one remittance with its history, ENOTFOUND for another merchant's.
type Remittances interface {
	Remittance(ctx context.Context, merchant int64, txID string) (*remittance.Remittance, error)
}

// Rates lists the FX rates and sets one (*fx.Service; Set is the CLI's
// fx set).
type Rates interface {
	List(ctx context.Context) ([]fx.Rate, error)
	Set(ctx context.Context, base, quote, mid string, spreadBps int64) (*fx.Rate, error)
}

var (
	_ Ledger     = (*ledger.Ledger)(nil)
	_ Cards      = (*cards.Service)(nil)
	_ Deliveries = (*delivery.Store)(nil)
	_ Rates      = (*fx.Service)(nil)

	_ Remittances = (*remittance.Service)(nil)
)
