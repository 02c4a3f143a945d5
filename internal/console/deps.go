package console

import (
	"context"
	"time"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/fx"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
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
	Entries(ctx context.Context, merchant, from, to int64, limit int) ([]postings.Record, error)
	Now() time.Time
	Balance(ctx context.Context, a postings.Account) (int64, error)
}

// Merchants are the merchants (*merchant.Service): their reads, creation
// and settings, and the operator's key roll (the CLI's merchant
// callback-url, merchant roll-key).
type Merchants interface {
	MerchantByID(ctx context.Context, id int64) (*merchant.Merchant, error)
	MerchantByShopNo(ctx context.Context, shopNo string) (*merchant.Merchant, error)
	CreateMerchant(ctx context.Context, spec merchant.Spec) (*merchant.Merchant, *merchant.Credentials, error)
	SetMerchantStatus(ctx context.Context, merchant int64, status string) error
	SetIPWhitelist(ctx context.Context, merchant int64, list []string) error
	SetCallbackURL(ctx context.Context, merchant int64, url string) error
	RollPublicKey(ctx context.Context, merchant int64, overlap time.Duration, heldPrevious bool, idem *ledger.Idempotency) (*merchant.KeyRoll, error)
	RollSigningKey(ctx context.Context, merchant int64, overlap time.Duration, idem *ledger.Idempotency) (*merchant.KeyRoll, error)
	// The operator's list of merchants, a page at a time.
	List(ctx context.Context, after int64, limit int) ([]merchant.Merchant, error)
}

// Bills reads the merchant's bill (*bill.Service).
type Bills interface {
	Bill(ctx context.Context, merchant int64, from, to time.Time, page, size int) (*bill.Page, error)
	BillRange(ctx context.Context, merchant int64, from, to time.Time) (bill.Range, error)
	BillStream(ctx context.Context, merchant int64, r bill.Range, batch int, fn func([]bill.Line) error) error
	BalanceReport(ctx context.Context, merchant int64, from, to time.Time, currency string) (*bill.BalanceReport, error)
	// The balances page's chart: the money moved by day, currency and kind.
	DailyVolume(ctx context.Context, merchant int64, from, to time.Time) ([]bill.VolumeDay, error)
}

// Audit checks the books (*audit.Service): audit verify and the
// statement's reads.
type Audit interface {
	StatementAccounts(ctx context.Context, merchant int64, from, to time.Time) ([]audit.StatementAccount, error)
	Verify(ctx context.Context, opts audit.VerifyOptions) (*audit.Report, error)
	// The books pages' reads (books.go): stored checkpoints and closes.
	Checkpoints(ctx context.Context, before int64, limit int) ([]audit.StoredCheckpoint, error)
	CheckpointByID(ctx context.Context, id int64) (*audit.Checkpoint, error)
	PeriodCloses(ctx context.Context, merchant, before int64, limit int) ([]audit.StoredClose, error)
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
	// The pages' lists: the card search and a merchant's BIN overrides.
	Search(ctx context.Context, merchant int64, q, status string, limit int) ([]string, error)
	BINOverrides(ctx context.Context, merchant int64, limit int) ([]cards.BINAccess, error)
}

// Deliveries are the webhook events and their replay (*delivery.Store).
type Deliveries interface {
	DeliveriesInOrder(ctx context.Context, merchant int64, status string, order delivery.Order, limit int) ([]delivery.DeliveryInfo, error)
	Endpoints(ctx context.Context, merchant int64) ([]delivery.Endpoint, error)
	ReplayEvent(ctx context.Context, merchant int64, eventID string) (*delivery.DeliveryInfo, error)
	Event(ctx context.Context, merchant int64, eventID string) (*delivery.DeliveryInfo, error)
	Attempts(ctx context.Context, merchant int64, eventID string, limit int) ([]delivery.Attempt, error)
	Stuck(ctx context.Context, limit int) ([]delivery.StuckDelivery, error)
}

// Remittances are the remittance domain's reads (*remittance.Service):
// one remittance with its history, ENOTFOUND for another merchant's; a
// merchant's list; the stuck ones; the sanctions list in brief.
type Remittances interface {
	Remittance(ctx context.Context, merchant int64, txID string) (*remittance.Remittance, error)
	List(ctx context.Context, merchant int64, status, before string, limit int) ([]remittance.ListItem, error)
	Stuck(ctx context.Context, before time.Time, limit int) ([]remittance.StuckRemittance, error)
	SanctionsSample(ctx context.Context, n int) (*remittance.SanctionsSummary, error)
}

// Holds are the network's open authorization holds near expiry
// (*network.Service).
type Holds interface {
	HoldsExpiring(ctx context.Context, until, afterAt time.Time, afterID string, limit int) ([]network.ExpiringHold, error)
}

// Rates lists the FX rates and sets one (*fx.Service; Set is the CLI's
// fx set).
type Rates interface {
	List(ctx context.Context) ([]fx.Rate, error)
	Set(ctx context.Context, base, quote, mid string, spreadBps int64) (*fx.Rate, error)
}

var (
	_ Ledger     = (*ledger.Ledger)(nil)
	_ Merchants  = (*merchant.Service)(nil)
	_ Bills      = (*bill.Service)(nil)
	_ Audit      = (*audit.Service)(nil)
	_ Cards      = (*cards.Service)(nil)
	_ Deliveries = (*delivery.Store)(nil)
	_ Rates      = (*fx.Service)(nil)
	_ Holds      = (*network.Service)(nil)

	_ Remittances = (*remittance.Service)(nil)
)
