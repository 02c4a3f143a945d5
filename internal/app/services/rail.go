package services

import (
	"context"
	"time"

	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/reconcile"
)

// RailEntries is the remittance domain as the rail report reconciliation's
// source (reconcile.RailSource), as Settlements is the network's: a Go
// struct conversion per row, which stops compiling if the shapes drift.
func (s *Services) RailEntries() reconcile.RailSource { return railEntries{s.Remit} }

type railEntries struct{ r *remittance.Service }

func (a railEntries) RailEntriesByTx(ctx context.Context, txIDs []string) ([]reconcile.RailEntry, error) {
	rows, err := a.r.RailEntriesByTx(ctx, txIDs)
	return railRows(rows), err
}

func (a railEntries) RailEntriesBetween(ctx context.Context, from, to time.Time, after reconcile.SettlementCursor,
	limit int) ([]reconcile.RailEntry, error) {
	rows, err := a.r.RailEntriesBetween(ctx, from, to, after.CreatedAt, after.EntryID, limit)
	return railRows(rows), err
}

func railRows(rows []remittance.RailEntry) []reconcile.RailEntry {
	out := make([]reconcile.RailEntry, len(rows))
	for i := range rows {
		out[i] = reconcile.RailEntry(rows[i])
	}
	return out
}
