package delivery

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/ledger"
)

// ShiftRetries moves the next attempt of a merchant's pending callbacks d
// earlier: its test clock advanced by d (internal/testclock), in the
// transaction that records the advance. The dispatcher then retries them
// as if d had passed; the schedule after that attempt, and the 24-hour
// window, keep real time. A callback being sent as this runs may be sent
// twice: delivery is at least once, as always.
func ShiftRetries(ctx context.Context, db bun.IDB, merchant int64, d time.Duration) error {
	_, err := db.NewRaw(`update deliveries set next_attempt_at = next_attempt_at - ? * interval '1 microsecond'
		where merchant_id = ? and status = 'PENDING' and next_attempt_at is not null`, d.Microseconds(), merchant).Exec(ctx)
	return ledger.MapError(err)
}
