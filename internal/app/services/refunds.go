package services

import (
	"context"
	"time"

	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/reconcile"
)

// Refunds is the network domain as refund reconciliation's source
// (reconcile.RefundSource), as Settlements is for the clearings: a Go
// struct conversion per row, which stops compiling if the shapes drift.
func (s *Services) Refunds() reconcile.RefundSource { return refunds{s.Network} }

type refunds struct{ n *network.Service }

func (a refunds) RefundsByMessage(ctx context.Context, messageIDs []string) ([]reconcile.RefundEntry, error) {
	rows, err := a.n.RefundsByMessage(ctx, messageIDs)
	return refundRows(rows), err
}

func (a refunds) RefundsBetween(ctx context.Context, from, to time.Time, after reconcile.SettlementCursor,
	limit int) ([]reconcile.RefundEntry, error) {
	rows, err := a.n.RefundsBetween(ctx, from, to, network.SettlementCursor(after), limit)
	return refundRows(rows), err
}

func refundRows(rows []network.RefundEntry) []reconcile.RefundEntry {
	out := make([]reconcile.RefundEntry, len(rows))
	for i := range rows {
		out[i] = reconcile.RefundEntry(rows[i])
	}
	return out
}
