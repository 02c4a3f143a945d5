package remittance

import (
	"context"
	"database/sql"
	"errors"

	"github.com/paygate/gateway/ledger"
)

// Remittance reads one of the merchant's remittances with its history;
// ENOTFOUND "remittance" for an unknown or another merchant's txId.
func (s *Service) Remittance(ctx context.Context, merchant int64, txID string) (*Remittance, error) {
	var row remitRow
	err := s.l.DB().NewSelect().Model(&row).Where("tx_id = ? and merchant_id = ?", txID, merchant).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errRemitNotFound()
	}
	if err != nil {
		return nil, ledger.MapError(err)
	}
	var steps []RemittanceStep
	err = s.l.DB().NewRaw(`select status, coalesce(reason, '') as reason, at from remittance_history where tx_id = ? order by seq`, txID).
		Scan(ctx, &steps)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	for i := range steps {
		steps[i].At = steps[i].At.UTC()
	}
	return remitView(&row, steps), nil
}
