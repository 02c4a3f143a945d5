package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/merchant"
)

// cmdWebhookSecretRoll makes the merchant a new Standard Webhooks secret
// (docs/callbacks.md, "Standard Webhooks") and prints it once, on stdout
// only: the store keeps it sealed and nothing shows it again. The replaced
// secret keeps signing for the overlap, so a receiver given the new one
// never refuses a genuine callback. A merchant whose secret was made lazily
// (at its first delivery, unseen) rolls with --overlap-hours 0 to read one.
func cmdWebhookSecretRoll(ctx context.Context, e *env, args []string) error {
	var hours *int
	return withMerchant(ctx, e, "webhook secret roll",
		"Replace a merchant's Standard Webhooks secret (whsec_…); the old one keeps signing for the overlap. Prints the new secret once.", args,
		func(fs *flag.FlagSet) {
			hours = overlapFlag(fs, "secret keeps signing")
		},
		func(l *app.Services, m *merchant.Merchant) error {
			overlap, err := overlapOf(*hours)
			if err != nil {
				return err
			}
			r, err := l.Deliveries.RollWebhookSecret(ctx, m.ID, overlap)
			if err != nil {
				return err
			}
			return printRoll(e, map[string]any{"shopNo": m.ShopNo, "secret": r.Secret}, r.RolledAt, r.PreviousValidUntil)
		})
}

// firstWebhookSecret makes a new merchant's Standard Webhooks secret for
// `merchant create` to print beside its keys. The merchant is already
// created and complete without it (a delivery makes one lazily), so a
// failure here prints null and says how to get one, rather than hiding the
// credentials just made behind an error.
func firstWebhookSecret(ctx context.Context, e *env, l *app.Services, merchant int64) any {
	r, err := l.Deliveries.RollWebhookSecret(ctx, merchant, 0)
	if err != nil {
		fmt.Fprintf(e.stderr, "merchant create: no webhook secret made (%v); `gateway webhook secret roll` makes one\n", err)
		return nil
	}
	return r.Secret
}
