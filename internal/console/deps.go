package console

import (
	"context"
	"time"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/console/books"
	"github.com/paygate/gateway/internal/console/house"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
)

// What the pages need from the domains, one small interface per area,
// declared where it is used (as api/deps.go): the console runs the same
// commands as the API and the operator CLI, one implementation behind two
// front ends.

// Ledger is the journal core's part (*ledger.Ledger): the operator's
// funding balances (house.Ledger) and the auditor's entries (books.Ledger).
type Ledger interface {
	house.Ledger
	books.Ledger
	Now() time.Time
}

// Merchants are the merchants (*merchant.Service): their reads, and the
// operator's commands (house.Merchants: creation, settings, key roll).
type Merchants interface {
	house.Merchants
	MerchantByID(ctx context.Context, id int64) (*merchant.Merchant, error)
}

// Bills reads the merchant's bill (*bill.Service), and the balance report
// (books.Bills).
type Bills interface {
	books.Bills
	Bill(ctx context.Context, merchant int64, from, to time.Time, page, size int) (*bill.Page, error)
	BillRange(ctx context.Context, merchant int64, from, to time.Time) (bill.Range, error)
	BillStream(ctx context.Context, merchant int64, r bill.Range, batch int, fn func([]bill.Line) error) error
	// The balances page's chart: the money moved by day, currency and kind.
	DailyVolume(ctx context.Context, merchant int64, from, to time.Time) ([]bill.VolumeDay, error)
}

// Audit checks the books (*audit.Service): the statement's reads, and
// audit verify, the checkpoints and closes (books.Audit).
type Audit interface {
	books.Audit
	StatementAccounts(ctx context.Context, merchant int64, from, to time.Time) ([]audit.StatementAccount, error)
}

// Cards are the card domain's reads and commands (*cards.Service): the
// merchant's, and the operator's (house.Cards).
type Cards interface {
	house.Cards
	Card(ctx context.Context, merchant int64, cardNo string) (*cards.Card, error)
	Cards(ctx context.Context, merchant int64, cardNos []string) (map[string]*cards.Card, error)
	FreezeCard(ctx context.Context, merchant int64, cardNo, reason string, idem *ledger.Idempotency) (*cards.Card, error)
	UnfreezeCard(ctx context.Context, merchant int64, cardNo string, idem *ledger.Idempotency) (*cards.Card, error)
	CancelCard(ctx context.Context, merchant int64, cardNo string, idem *ledger.Idempotency) (*cards.CancelResult, error)
	// The cards page's search.
	Search(ctx context.Context, merchant int64, q, status string, limit int) ([]string, error)
}

// Deliveries are the webhook events and their replay (*delivery.Store),
// and the stuck ones for the operator (house.Deliveries).
type Deliveries interface {
	house.Deliveries
	DeliveriesInOrder(ctx context.Context, merchant int64, status string, order delivery.Order, limit int) ([]delivery.DeliveryInfo, error)
	Endpoints(ctx context.Context, merchant int64) ([]delivery.Endpoint, error)
	ReplayEvent(ctx context.Context, merchant int64, eventID string) (*delivery.DeliveryInfo, error)
	Event(ctx context.Context, merchant int64, eventID string) (*delivery.DeliveryInfo, error)
	Attempts(ctx context.Context, merchant int64, eventID string, limit int) ([]delivery.Attempt, error)
}

// Remittances are the remittance domain's reads (*remittance.Service):
// one remittance with its history, ENOTFOUND for another merchant's; a
// merchant's list; for the operator the stuck ones and the sanctions list
// in brief (house.Remittances).
type Remittances interface {
	house.Remittances
	Remittance(ctx context.Context, merchant int64, txID string) (*remittance.Remittance, error)
	List(ctx context.Context, merchant int64, status, before string, limit int) ([]remittance.ListItem, error)
}

// The operator's pages' alone (internal/console/house).
type (
	Holds     = house.Holds     // the holds near expiry (*network.Service)
	Rates     = house.Rates     // the FX rates (*fx.Service)
	Sanctions = house.Sanctions // the sanctions list's load (*remittance.Service)
)

var (
	_ Ledger     = (*ledger.Ledger)(nil)
	_ Merchants  = (*merchant.Service)(nil)
	_ Bills      = (*bill.Service)(nil)
	_ Audit      = (*audit.Service)(nil)
	_ Cards      = (*cards.Service)(nil)
	_ Deliveries = (*delivery.Store)(nil)

	_ Remittances = (*remittance.Service)(nil)
)
