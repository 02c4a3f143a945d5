package network

import (
	"context"
	"database/sql"
	"time"

	"github.com/paygate/gateway/ledger"
)

// HoldBacklog is the authorization holds still open and the oldest one's
// creation (zero when none). One aggregate over authorizations_expiry_idx,
// for the on-call metrics (docs/operations.md, "Metrics").
func (s *Service) HoldBacklog(ctx context.Context) (open int64, oldest time.Time, err error) {
	var at sql.NullTime
	err = s.l.DB().QueryRowContext(ctx, `select count(*), min(created_at) from authorizations
		where status = 'OPEN'`).Scan(&open, &at)
	return open, at.Time, ledger.MapError(err)
}
