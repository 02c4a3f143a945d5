package console

import (
	"context"
	"time"

	"github.com/paygate/gateway/internal/bill"
)

// The pages' lists: a merchant's cards by status or last four digits and
// the daily volume, read through their owners' APIs (cards, bill), each
// bounded by a LIMIT.

// cardsPageMax bounds a card search.
const cardsPageMax = 50

// volumeDay is a day's money of one currency and kind (internal/bill).
type volumeDay = bill.VolumeDay

// dailyVolume reads [from, to) by day, currency and kind.
func (s *Server) dailyVolume(ctx context.Context, merchant int64, from, to time.Time) ([]volumeDay, error) {
	return s.cfg.Bills.DailyVolume(ctx, merchant, from, to)
}
