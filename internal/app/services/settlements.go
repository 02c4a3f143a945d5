package services

import (
	"context"
	"time"

	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/reconcile"
)

// Settlements is the network domain as settlement reconciliation's source.
// reconcile declares what it needs in its own types, so that its public API
// names nothing internal, and knows nothing of the network package; this
// adapter is the one place the two meet. The conversion of each row is a
// Go struct conversion: it stops compiling if the two shapes drift apart.
func (s *Services) Settlements() reconcile.SettlementSource { return settlements{s.Network} }

type settlements struct{ n *network.Service }

func (a settlements) SettlementsByAuth(ctx context.Context, authIDs []string) ([]reconcile.LedgerSettlement, error) {
	rows, err := a.n.SettlementsByAuth(ctx, authIDs)
	return ledgerSettlements(rows), err
}

func (a settlements) SettlementsBetween(ctx context.Context, from, to time.Time, after reconcile.SettlementCursor,
	limit int) ([]reconcile.LedgerSettlement, error) {
	rows, err := a.n.SettlementsBetween(ctx, from, to, network.SettlementCursor(after), limit)
	return ledgerSettlements(rows), err
}

func ledgerSettlements(rows []network.Settlement) []reconcile.LedgerSettlement {
	if rows == nil {
		return nil
	}
	out := make([]reconcile.LedgerSettlement, len(rows))
	for i := range rows {
		out[i] = reconcile.LedgerSettlement(rows[i])
	}
	return out
}
