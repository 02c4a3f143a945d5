package house

import (
	"context"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/deposit"
	"github.com/paygate/gateway/internal/fx"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// What the operator's pages need from the domains, one small interface per
// area, declared where it is used (as api/deps.go). The console's own
// interfaces (internal/console/deps.go) embed these, so that one value
// serves both.

// Ledger is the journal core's part (*ledger.Ledger): a funding balance.
type Ledger interface {
	Balance(ctx context.Context, a postings.Account) (int64, error)
}

// Merchants are the operator's merchant commands (*merchant.Service): the
// list, creation and settings, and the key roll (the CLI's merchant
// create, disable, enable, whitelist, callback-url, roll-key).
type Merchants interface {
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

// Cards are the card domain's operator commands (*cards.Service; the CLI's
// merchant kyb, merchant limits, bin add, bin access) and a merchant's
// profile and BIN overrides.
type Cards interface {
	Profile(ctx context.Context, merchant int64) (*cards.Profile, error)
	SetKYBTier(ctx context.Context, merchant int64, tier string) error
	SetLimit(ctx context.Context, merchant int64, currency string, cardBalanceMax, dailyCardIssueMax int64) error
	BINs(ctx context.Context) ([]cards.BIN, error)
	MerchantBINs(ctx context.Context, merchant int64) ([]cards.BIN, error)
	SetBINAccess(ctx context.Context, merchant int64, bin, currency string, allowed *bool) error
	UpsertBIN(ctx context.Context, b cards.BIN) error
	BINOverrides(ctx context.Context, merchant int64, limit int) ([]cards.BINAccess, error)
}

// Deliveries are the callbacks that are stuck (*delivery.Store).
type Deliveries interface {
	Stuck(ctx context.Context, limit int) ([]delivery.StuckDelivery, error)
}

// Remittances are the stuck remittances and the sanctions list in brief
// (*remittance.Service).
type Remittances interface {
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

// Deposits is the operator's deposit with its bank reference (the CLI's
// merchant deposit; *deposit.Service).
type Deposits interface {
	Deposit(ctx context.Context, merchant int64, currency string, minor int64, bankRef string, idem *ledger.Idempotency) (*deposit.Result, error)
}

// Console is the console's own tables (*store.Store): the sessions of a
// disabled merchant's users end; the row of the sanctions list's last load
// from the console says who loaded it.
type Console interface {
	EndMerchantSessions(ctx context.Context, merchant int64) error
	LastLoad(ctx context.Context, action, target string) (at time.Time, login string, err error)
}

var (
	_ Ledger      = (*ledger.Ledger)(nil)
	_ Merchants   = (*merchant.Service)(nil)
	_ Cards       = (*cards.Service)(nil)
	_ Deliveries  = (*delivery.Store)(nil)
	_ Remittances = (*remittance.Service)(nil)
	_ Holds       = (*network.Service)(nil)
	_ Rates       = (*fx.Service)(nil)
	_ Deposits    = (*deposit.Service)(nil)
)
