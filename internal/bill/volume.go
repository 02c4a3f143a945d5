package bill

import (
	"context"
	"time"

	"github.com/paygate/gateway/ledger"
)

// VolumeDay is the money that moved on a merchant's billable accounts on
// one UTC day in one currency and entry kind: the sum of the lines'
// absolute amounts, in minor units (the console's merchant dashboard).
type VolumeDay struct {
	Day      time.Time `bun:"day"`
	Currency string    `bun:"currency"`
	Kind     string    `bun:"kind"`
	Minor    int64     `bun:"minor"`
	Lines    int64     `bun:"lines"`
}

// volumeDaysMax bounds the rows of one read: days × currencies × kinds.
const volumeDaysMax = 10000

// DailyVolume reads [from, to) by day, currency and kind. Reading a day
// range of bill_lines is one seek of bill_lines_created_idx.
func (s *Service) DailyVolume(ctx context.Context, merchant int64, from, to time.Time) ([]VolumeDay, error) {
	var out []VolumeDay
	err := s.l.DB().NewRaw(`select date_trunc('day', created_at at time zone 'UTC') as day, currency, kind,
		       sum(abs(amount))::bigint as minor, count(*) as lines
		from bill_lines where merchant_id = ?0 and created_at >= ?1 and created_at < ?2
		group by 1, 2, 3 order by 1, 2, 3 limit ?3`, merchant, from, to, volumeDaysMax).Scan(ctx, &out)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	for i := range out {
		d := out[i].Day
		out[i].Day = time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
	}
	return out, nil
}
