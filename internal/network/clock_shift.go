package network

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/ledger"
)

// ShiftHolds moves the expiry of a merchant's open holds d earlier: its
// test clock advanced by d (internal/testclock), in the transaction that
// records the advance. The expiry worker then finds them due as if d had
// passed; the journal keeps real time.
func ShiftHolds(ctx context.Context, db bun.IDB, merchant int64, d time.Duration) error {
	_, err := db.NewRaw(`update authorizations set expires_at = expires_at - ? * interval '1 microsecond'
		where merchant_id = ? and status = 'OPEN'`, d.Microseconds(), merchant).Exec(ctx)
	return ledger.MapError(err)
}

// ExpireMerchantHolds releases a merchant's due holds now, at most
// ExpireBatchMax of them (the worker releases any more): a test clock's
// advance answers with its holds already expired.
func (s *Service) ExpireMerchantHolds(ctx context.Context, merchant int64) (int, error) {
	var due []dueHold
	err := s.l.DB().NewRaw(`select auth_id, merchant_id from authorizations where merchant_id = ? and status = 'OPEN' and expires_at <= ?
		order by expires_at limit ?`, merchant, s.l.Now(), ExpireBatchMax).Scan(ctx, &due)
	if err != nil {
		return 0, ledger.MapError(err)
	}
	return s.expireDue(ctx, due)
}
