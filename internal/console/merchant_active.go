package console

import (
	"context"

	"github.com/paygate/gateway/internal/merchant"
)

// A disabled merchant (gateway merchant disable, or the operator's Disable
// button) keeps nothing in the console (docs/security.md, "Disabled
// merchants"): its users cannot sign in — the login refuses them as it
// refuses a disabled user, after the same password hash, so the refusal
// looks and costs the same as the generic one — and their sessions end at
// their next request. Both checks ask internal/merchant for the user's
// merchant when they load the user (userInScope, userByID, touchSession):
// nothing is cached, so a disable applies to the very next request of any
// console process. That is one primary-key read more per request of a
// merchant's user (the house's have no merchant): the console is no hot
// path, and a cache would let a disabled merchant's session live on.

// completeUser fills in u's merchant (shop number and name) and says
// whether it is active; a house user, with no merchant, always is. A
// merchant that cannot be found is not active.
func (s *consoleStore) completeUser(ctx context.Context, u *User) (active bool, err error) {
	if u.MerchantID == 0 {
		return true, nil
	}
	m, err := s.merchants.MerchantByID(ctx, u.MerchantID)
	if err != nil {
		return false, err
	}
	u.ShopNo, u.Merchant = m.ShopNo, m.Name
	return m.Status == merchant.Active, nil
}
