package console

import (
	"github.com/paygate/gateway/internal/adjustment"
	"github.com/paygate/gateway/internal/console/books"
	"github.com/paygate/gateway/internal/console/house"
	"github.com/paygate/gateway/internal/deposit"
	"github.com/paygate/gateway/ledger"
)

// Deposits is the operator's deposit with its bank reference (the CLI's
// merchant deposit; *deposit.Service), which the operator's pages run.
type Deposits = house.Deposits

// Adjustments are the corrections (the CLI's adjustment commands;
// *adjustment.Service), which the books' pages run.
type Adjustments = books.Adjustments

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
