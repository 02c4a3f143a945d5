package delivery

import (
	"context"
	"database/sql"
	"time"

	"github.com/paygate/gateway/ledger"
)

// Backlog is the callbacks not yet delivered: how many are pending, how
// many of those have had a failed attempt, and the oldest one's window
// start (zero when none). One aggregate over deliveries_due_idx, for the
// on-call metrics (docs/operations.md, "Metrics").
func (s *Store) Backlog(ctx context.Context) (pending, retrying int64, oldest time.Time, err error) {
	var at sql.NullTime
	err = s.l.DB().QueryRowContext(ctx, `select count(*), count(*) filter (where attempts > 0), min(window_start)
		from deliveries where status = 'PENDING'`).Scan(&pending, &retrying, &at)
	return pending, retrying, at.Time, ledger.MapError(err)
}
