package console

import (
	"context"

	"github.com/paygate/gateway/internal/adjustment"
	"github.com/paygate/gateway/internal/deposit"
	"github.com/paygate/gateway/ledger"
)

// Deposits is the operator's deposit with its bank reference (the CLI's
// merchant deposit; *deposit.Service).
type Deposits interface {
	Deposit(ctx context.Context, merchant int64, currency string, minor int64, bankRef string, idem *ledger.Idempotency) (*deposit.Result, error)
}

// Adjustments are the corrections (the CLI's adjustment commands;
// *adjustment.Service).
type Adjustments interface {
	Propose(ctx context.Context, actor adjustment.Actor, in adjustment.ProposeInput) (*adjustment.Proposal, error)
	Approve(ctx context.Context, actor adjustment.Actor, merchant, id int64) (*adjustment.Proposal, error)
	Reject(ctx context.Context, actor adjustment.Actor, merchant, id int64) (*adjustment.Proposal, error)
	List(ctx context.Context, merchant int64, limit int) ([]*adjustment.Proposal, error)
}

// defaultFinance builds the deposits and adjustments on the ledger when
// the configuration names none.
func defaultFinance(cfg *Config) {
	l, ok := cfg.Ledger.(*ledger.Ledger)
	if !ok {
		return
	}
	if cfg.Deposits == nil {
		cfg.Deposits = deposit.New(l)
	}
	if cfg.Adjustments == nil {
		cfg.Adjustments = adjustment.New(l)
	}
}
