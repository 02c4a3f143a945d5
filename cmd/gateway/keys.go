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
			hours = overlapFlag(fs, "key stays valid")
		},
		func(l *app.Services, m *merchant.Merchant) error {
			overlap, err := overlapOf(*hours)
			if err != nil {
				return err
			}
			var r *merchant.KeyRoll
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
			return printRoll(e, map[string]any{"shopNo": m.ShopNo, "kind": r.Kind, "key": r.Key}, r.RolledAt, r.PreviousValidUntil)
		})
}

// overlapFlag defines --overlap-hours of a roll (of a key or the webhook
// secret): how long the replaced one stays valid.
func overlapFlag(fs *flag.FlagSet, what string) *int {
	return fs.Int("overlap-hours", int(merchant.KeyOverlapDefault/time.Hour),
		fmt.Sprintf("how long the replaced %s, 0 to %d (0 ends it at once, as after a leak)", what, int(merchant.KeyOverlapMax/time.Hour)))
}

// overlapOf checks --overlap-hours: refused, not clamped, outside 0 to 168.
func overlapOf(hours int) (time.Duration, error) {
	if hours < 0 || hours > int(merchant.KeyOverlapMax/time.Hour) {
		return 0, postings.FieldErrorf("overlap-hours", "must be from 0 to %d", int(merchant.KeyOverlapMax/time.Hour))
	}
	return time.Duration(hours) * time.Hour, nil
}

// printRoll prints a roll's answer: fields (the new key or secret, once),
// then when it was made and when the replaced one stops (null: at once).
func printRoll(e *env, fields map[string]any, rolledAt time.Time, until *time.Time) error {
	fields["rolledAt"], fields["previousValidUntil"] = rolledAt.Format(time.RFC3339), nil
	if until != nil {
		fields["previousValidUntil"] = until.Format(time.RFC3339)
	}
	return printJSON(e, fields)
}
