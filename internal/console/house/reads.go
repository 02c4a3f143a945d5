package house

import (
	"context"

	"github.com/paygate/gateway/internal/network"
)

// The operator pages' reads, through their owners: a merchant's BIN
// overrides (cards) and the authorization holds that expire soon (the
// network).

// binOverridesMax bounds the overrides read for one merchant (the
// catalogue is a handful of entries).
const binOverridesMax = 1000

// binOverrides maps "bin/currency" to "allow" or "deny" for the merchant's
// explicit BIN access (merchant_bins); an entry without one follows the
// default rule.
func (s *pages) binOverrides(ctx context.Context, merchant int64) (map[string]string, error) {
	acc, err := s.d.Cards.BINOverrides(ctx, merchant, binOverridesMax)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, a := range acc {
		out[a.BIN+"/"+a.Currency] = map[bool]string{true: "allow", false: "deny"}[a.Allowed]
	}
	return out, nil
}

// holdRow is an open authorization hold.
type holdRow = network.ExpiringHold

// HoldsPageMax bounds a page of holds near expiry (a variable so that a
// test can page with a few).
var HoldsPageMax = 100
