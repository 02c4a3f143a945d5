package remittance

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/ledger"
)

// ShiftNextActions moves the next step of a merchant's remittances in
// progress d earlier: its test clock advanced by d (internal/testclock),
// in the transaction that records the advance. The lifecycle worker then
// finds them due as if d had passed (screening's delay, the rail's). A
// test merchant's IN_FLIGHT remittance still waits for its sandbox to
// settle or return it: the simulated rail leaves it alone.
func ShiftNextActions(ctx context.Context, db bun.IDB, merchant int64, d time.Duration) error {
	_, err := db.NewRaw(`update remittances set next_action_at = next_action_at - ? * interval '1 microsecond'
		where merchant_id = ? and next_action_at is not null`, d.Microseconds(), merchant).Exec(ctx)
	return ledger.MapError(err)
}
