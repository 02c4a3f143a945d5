package house

import (
	"context"
	"time"

	"github.com/paygate/gateway/internal/merchant"
)

// The merchants' list and the work that is stuck, read through their
// owners' APIs (merchant, delivery, remittance), each bounded by a LIMIT.

// merchantRow is one merchant in the operator's list.
type merchantRow = merchant.Merchant

const merchantsPageMax = merchant.ListMax

// merchants lists merchants by id from after (0: the first), a page at a
// time.
func (s *pages) merchants(ctx context.Context, after int64) ([]merchantRow, error) {
	return s.d.Merchants.List(ctx, after, merchantsPageMax)
}

// stuckItem is a callback or a remittance that needs a look.
type stuckItem struct {
	ShopNo   string
	What     string // the event type or the remittance's status
	ID       string // the event id or the remittance's txId
	Status   string
	Attempts int
	Since    time.Time
	Detail   string
}

const stuckMax = 100

// stuckCallbacks are the deliveries that failed, or are still pending
// after a retry: their receivers need a look.
func (s *pages) stuckCallbacks(ctx context.Context) ([]stuckItem, error) {
	ds, err := s.d.Deliveries.Stuck(ctx, stuckMax)
	if err != nil {
		return nil, err
	}
	out := make([]stuckItem, 0, len(ds))
	for _, d := range ds {
		out = append(out, stuckItem{ShopNo: d.ShopNo, What: d.EventType, ID: d.EventID, Status: d.Status,
			Attempts: d.Attempts, Since: d.CreatedAt, Detail: d.Detail})
	}
	return out, nil
}

// stuckRemittances are the remittances not final an hour after they were
// made.
func (s *pages) stuckRemittances(ctx context.Context, now time.Time) ([]stuckItem, error) {
	rs, err := s.d.Remittances.Stuck(ctx, now.Add(-time.Hour), stuckMax)
	if err != nil {
		return nil, err
	}
	out := make([]stuckItem, 0, len(rs))
	for _, r := range rs {
		out = append(out, stuckItem{ShopNo: r.ShopNo, What: r.Status, ID: r.TxID, Status: r.Status, Since: r.CreatedAt})
	}
	return out, nil
}
