// Package audit checks the books the journal core keeps: Verify recomputes
// every invariant of the journal, its balances, its bill lines and the
// domains' tables that mirror it (holds), and StatementAccounts reads a
// merchant's billable accounts over a period for the statement check;
// Balances and EntriesByRef are the other reads of the books (books.go). It
// only reads, on the standby when a read route is set (internal/database).
//
// It imports no domain: what it checks of a domain's tables (the card
// holds) is SQL on those tables, read in the same snapshot. reconcile/
// builds its reports on it, and the card domain's profile reads the
// funding balances through it.
package audit

import (
	"log/slog"

	"github.com/paygate/gateway/ledger"
)

// Service checks one ledger's books.
type Service struct {
	l   *ledger.Ledger
	log *slog.Logger
}

// New returns the audit of l's books.
func New(l *ledger.Ledger) *Service { return &Service{l: l, log: l.Logger()} }
