package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// cmdMerchantRollKey is the operator's equivalent of POST
// /shop/keys/{public,signing}/roll (docs/security.md, "Rolling keys"): the
// same ledger call, printing the new key once on stdout, nowhere else. The
// operator holds no key of the merchant's, so a public-key roll during an
// overlap keeps the current key beside the new one.
func cmdMerchantRollKey(ctx context.Context, e *env, args []string) error {
	var kind *string
	var hours *int
	return withMerchant(ctx, e, "merchant roll-key",
		"Replace a merchant's public key or callback signing key; the old one stays valid for the overlap. Prints the new key once.", args,
		func(fs *flag.FlagSet) {
			kind = fs.String("key", "", "which key: public (authenticates /shop requests) or signing (signs callbacks) (required)")
			hours = fs.Int("overlap-hours", int(merchant.KeyOverlapDefault/time.Hour),
				fmt.Sprintf("how long the replaced key stays valid, 0 to %d (0 ends it at once, as after a leak)", int(merchant.KeyOverlapMax/time.Hour)))
		},
		func(l *app.Services, m *merchant.Merchant) error {
			if *hours < 0 || *hours > int(merchant.KeyOverlapMax/time.Hour) {
				return postings.FieldErrorf("overlap-hours", "must be from 0 to %d", int(merchant.KeyOverlapMax/time.Hour))
			}
			overlap := time.Duration(*hours) * time.Hour
			var r *merchant.KeyRoll
			var err error
			switch *kind {
			case merchant.KeyPublic:
				r, err = l.RollPublicKey(ctx, m.ID, overlap, false, nil)
			case merchant.KeySigning:
				r, err = l.RollSigningKey(ctx, m.ID, overlap, nil)
			default:
				return usageError("--key must be public or signing")
			}
			if err != nil {
				return err
			}
			out := map[string]any{"shopNo": m.ShopNo, "kind": r.Kind, "key": r.Key,
				"rolledAt": r.RolledAt.Format(time.RFC3339), "previousValidUntil": nil}
			if r.PreviousValidUntil != nil {
				out["previousValidUntil"] = r.PreviousValidUntil.Format(time.RFC3339)
			}
			return printJSON(e, out)
		})
}
