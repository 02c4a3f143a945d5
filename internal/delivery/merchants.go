package delivery

import (
	"context"

	"github.com/paygate/gateway/internal/merchant"
)

// The merchants table is internal/merchant's (internal/archtest,
// tableOwners): what a listing, a replay or a claim needs of a merchant —
// its shop number, its callback URL, its sealed signing keys — is read
// through merchant.Briefs and merchant.SigningKeys, one batch read per
// listing or claim, never one per row.

// withShop sets the shop number of a listing of one merchant's events: one
// primary-key read, skipped for an empty listing.
func (s *Store) withShop(ctx context.Context, merchantID int64, list []*DeliveryInfo) error {
	if len(list) == 0 {
		return nil
	}
	m, err := merchant.Brief1(ctx, s.l.DB(), merchantID)
	if err != nil {
		return err
	}
	for _, d := range list {
		d.ShopNo = m.ShopNo
	}
	return nil
}

// pageWithShop completes a page read by withShop, once the page is read.
func (s *Store) pageWithShop(p *EventPage, err error) func(context.Context, int64) (*EventPage, error) {
	return func(ctx context.Context, merchantID int64) (*EventPage, error) {
		if err != nil {
			return nil, err
		}
		return p, s.complete(ctx, merchantID, ptrs(p.List))
	}
}

func ptrs(list []DeliveryInfo) []*DeliveryInfo {
	out := make([]*DeliveryInfo, len(list))
	for i := range list {
		out[i] = &list[i]
	}
	return out
}

// callbackURL is the merchant's callback URL now, nil when it has none (or
// there is no such merchant: a replay then finds no event to send).
func (s *Store) callbackURL(ctx context.Context, merchantID int64) (*string, error) {
	ms, err := merchant.Briefs(ctx, s.l.DB(), []int64{merchantID})
	if err != nil {
		return nil, err
	}
	if u := ms[merchantID].CallbackURL; u != "" {
		return &u, nil
	}
	return nil, nil
}
