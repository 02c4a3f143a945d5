package books

import (
	"context"
	"time"

	"github.com/paygate/gateway/internal/adjustment"
	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/internal/console/store"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// What the books' pages need from the domains, one small interface per
// area, declared where it is used (as api/deps.go). The console's own
// interfaces (internal/console/deps.go) embed these, so that one value
// serves both.

// Ledger is the journal core's part (*ledger.Ledger): a merchant's entries
// by sequence.
type Ledger interface {
	Entries(ctx context.Context, merchant, from, to int64, limit int) ([]postings.Record, error)
}

// Merchants are the merchants' reads (*merchant.Service).
type Merchants interface {
	MerchantByID(ctx context.Context, id int64) (*merchant.Merchant, error)
	MerchantByShopNo(ctx context.Context, shopNo string) (*merchant.Merchant, error)
}

// Bills is the balance report (*bill.Service).
type Bills interface {
	BalanceReport(ctx context.Context, merchant int64, from, to time.Time, currency string) (*bill.BalanceReport, error)
}

// Audit checks the books (*audit.Service): audit verify, and the stored
// checkpoints and closes (records.go).
type Audit interface {
	Verify(ctx context.Context, opts audit.VerifyOptions) (*audit.Report, error)
	Checkpoints(ctx context.Context, before int64, limit int) ([]audit.StoredCheckpoint, error)
	CheckpointByID(ctx context.Context, id int64) (*audit.Checkpoint, error)
	PeriodCloses(ctx context.Context, merchant, before int64, limit int) ([]audit.StoredClose, error)
}

// Adjustments are the corrections (the CLI's adjustment commands;
// *adjustment.Service).
type Adjustments interface {
	Propose(ctx context.Context, actor adjustment.Actor, in adjustment.ProposeInput) (*adjustment.Proposal, error)
	Approve(ctx context.Context, actor adjustment.Actor, merchant, id int64) (*adjustment.Proposal, error)
	Reject(ctx context.Context, actor adjustment.Actor, merchant, id int64) (*adjustment.Proposal, error)
	List(ctx context.Context, merchant, before int64, limit int) ([]*adjustment.Proposal, error)
}

// Trail is the console's audit trail (*store.Store), for the row of a
// verify run that ends after its request.
type Trail interface {
	Audit(ctx context.Context, e store.AuditEntry) error
}

var (
	_ Ledger      = (*ledger.Ledger)(nil)
	_ Merchants   = (*merchant.Service)(nil)
	_ Bills       = (*bill.Service)(nil)
	_ Audit       = (*audit.Service)(nil)
	_ Adjustments = (*adjustment.Service)(nil)
	_ Trail       = (*store.Store)(nil)
)
