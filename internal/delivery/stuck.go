package delivery

import (
	"context"
	"time"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
)

// StuckDelivery is a callback whose receiver needs a look: its delivery
// failed (the 24-hour window ended), or it is still pending after a retry.
type StuckDelivery struct {
	ShopNo    string    `bun:"-"` // the merchant's (merchant.Briefs)
	Merchant  int64     `bun:"merchant_id"`
	EventType string    `bun:"event_type"`
	EventID   string    `bun:"event_id"`
	Status    string    `bun:"status"`
	Attempts  int       `bun:"attempts"`
	CreatedAt time.Time `bun:"created_at"` // the event's
	// Detail is the last attempt's error, else its HTTP status ("HTTP 500").
	Detail string `bun:"detail"`
}

// Stuck lists, across merchants, the deliveries that failed or are pending
// after a retry, oldest event first, at most limit: the operator's page of
// work that is stuck.
func (s *Store) Stuck(ctx context.Context, limit int) ([]StuckDelivery, error) {
	var out []StuckDelivery
	err := s.l.DB().NewRaw(`select d.merchant_id, e.event_type, e.event_id, d.status, d.attempts, e.created_at,
		       coalesce(d.last_error, coalesce('HTTP ' || d.last_status::text, '')) as detail
		from deliveries d
		join events e on e.merchant_id = d.merchant_id and e.event_seq = d.event_seq
		where d.status = 'FAILED' or (d.status = 'PENDING' and d.attempts > 0)
		order by e.created_at limit ?`, limit).Scan(ctx, &out)
	if err != nil || len(out) == 0 {
		return out, ledger.MapError(err)
	}
	// One batch read for the page: the merchants are internal/merchant's.
	err = merchant.NameShops(ctx, s.l.DB(), out, func(d *StuckDelivery) int64 { return d.Merchant },
		func(d *StuckDelivery, shop string) { d.ShopNo = shop })
	return out, err
}
