package remittance

import (
	"context"
	"database/sql"
	"time"

	"github.com/paygate/gateway/ledger"
)

// Backlog is the remittances not yet final and the oldest one's creation
// (zero when none). One aggregate over remittances_due_idx, for the
// on-call metrics (docs/operations.md, "Metrics").
func (s *Service) Backlog(ctx context.Context) (open int64, oldest time.Time, err error) {
	var at sql.NullTime
	err = s.l.DB().QueryRowContext(ctx, `select count(*), min(created_at) from remittances
		where next_action_at is not null`).Scan(&open, &at)
	return open, at.Time, ledger.MapError(err)
}
