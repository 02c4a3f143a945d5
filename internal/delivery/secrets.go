package delivery

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/api/receiver/signature"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
)

// The merchant's Standard Webhooks secret (webhook_secrets,
// sql/0020_webhook_secrets.sql; docs/callbacks.md, "Standard Webhooks").
// Kept apart from the merchants' code (which is moving) on purpose: this
// file is the only one that seals, opens or rolls it. The rules of a roll
// are the signing key's (ledger/keyroll.go): the replaced secret signs too
// until the overlap ends; a second roll during an overlap keeps the OLDER
// secret, which every receiver has, and ends the newer one at once.

// secretContext is the sealer's associated data: a sealed secret moved to
// another merchant's row does not open.
func secretContext(shopNo string) string { return "merchant-webhook-secret:" + shopNo }

// SecretRoll is a new webhook secret, shown once.
type SecretRoll struct {
	Secret   string
	RolledAt time.Time
	// PreviousValidUntil is the end of the overlap, nil when no previous
	// secret signs any more (overlap 0, or the merchant's first secret).
	PreviousValidUntil *time.Time
}

// RollWebhookSecret makes the merchant a new webhook secret and returns it
// (the only time it is readable); the replaced one keeps signing for
// overlap (0: not at all; at most merchant.KeyOverlapMax). A merchant
// without a secret gets its first one.
func (s *Store) RollWebhookSecret(ctx context.Context, merchantID int64, overlap time.Duration) (*SecretRoll, error) {
	if err := merchant.CheckKeyOverlap("overlapHours", overlap); err != nil {
		return nil, err
	}
	if s.sealer == nil {
		return nil, errors.New("delivery: no data key configured")
	}
	secret, err := signature.NewSecret()
	if err != nil {
		return nil, err
	}
	now := s.l.Now()
	roll := &SecretRoll{Secret: secret, RolledAt: now}
	var until *time.Time
	if overlap > 0 {
		t := now.Add(overlap)
		until = &t
	}
	err = s.l.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		m, err := merchant.Brief1(ctx, tx, merchantID)
		if err != nil {
			return err
		}
		sealed := s.sealer.Seal([]byte(secret), secretContext(m.ShopNo))
		res, err := tx.NewRaw(`insert into webhook_secrets (merchant_id, secret_sealed, rolled_at) values (?, ?, ?)
			on conflict (merchant_id) do nothing`, merchantID, sealed, now).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil // the first secret: nothing to keep beside it
		}
		var prevUntil *time.Time
		if err := tx.NewRaw(`select secret_prev_until from webhook_secrets where merchant_id = ? for update`,
			merchantID).Scan(ctx, &prevUntil); err != nil {
			return err
		}
		// Which secret stays beside the new one: during an overlap the
		// older (previous) one, else the current one.
		keep := "secret_sealed"
		if prevUntil != nil && now.Before(*prevUntil) {
			keep = "secret_prev_sealed"
		}
		roll.PreviousValidUntil = until
		_, err = tx.NewRaw(`update webhook_secrets set
			secret_prev_sealed = case when ?::timestamptz is null then null else `+keep+` end,
			secret_prev_until = ?::timestamptz, secret_sealed = ?, rolled_at = ? where merchant_id = ?`,
			until, until, sealed, now, merchantID).Exec(ctx)
		return err
	})
	if err != nil {
		return nil, ledger.MapError(err)
	}
	return roll, nil
}

// webhookSecrets returns the secrets in force of the given merchants
// (id → shop number), oldest first, giving a first secret to each that has
// none yet (a merchant created before sql/0020): nobody has seen that
// secret, so the merchant rolls it to read one, and the gateway's
// deliveries carry the Standard Webhooks headers from the start.
func (s *Store) webhookSecrets(ctx context.Context, shops map[int64]string) (map[int64][]string, error) {
	out := make(map[int64][]string, len(shops))
	if len(shops) == 0 {
		return out, nil
	}
	ids := make([]int64, 0, len(shops))
	for id := range shops {
		ids = append(ids, id)
	}
	if err := s.readSecrets(ctx, ids, shops, out); err != nil {
		return nil, err
	}
	var missing []int64
	for _, id := range ids {
		if _, ok := out[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	for _, id := range missing {
		secret, err := signature.NewSecret()
		if err != nil {
			return nil, err
		}
		// Two dispatchers may both create one: the first wins, and both
		// read it back below.
		if _, err := s.l.DB().NewRaw(`insert into webhook_secrets (merchant_id, secret_sealed, rolled_at) values (?, ?, ?)
			on conflict (merchant_id) do nothing`, id, s.sealer.Seal([]byte(secret), secretContext(shops[id])), s.l.Now()).Exec(ctx); err != nil {
			return nil, ledger.MapError(err)
		}
	}
	return out, s.readSecrets(ctx, missing, shops, out)
}

func (s *Store) readSecrets(ctx context.Context, ids []int64, shops map[int64]string, out map[int64][]string) error {
	var rows []struct {
		MerchantID int64      `bun:"merchant_id"`
		Sealed     []byte     `bun:"secret_sealed"`
		PrevSealed []byte     `bun:"secret_prev_sealed"`
		PrevUntil  *time.Time `bun:"secret_prev_until"`
	}
	if err := s.l.DB().NewRaw(`select merchant_id, secret_sealed, secret_prev_sealed, secret_prev_until
		from webhook_secrets where merchant_id = any(?::bigint[])`, pgdialect.Array(ids)).Scan(ctx, &rows); err != nil {
		return ledger.MapError(err)
	}
	now := s.l.Now()
	for _, r := range rows {
		shop := shops[r.MerchantID]
		cur, err := s.sealer.Open(r.Sealed, secretContext(shop))
		if err != nil {
			return ledger.Invariantf("the webhook secret of %s does not open: %v", shop, err)
		}
		secrets := []string{string(cur)}
		if r.PrevUntil != nil && now.Before(*r.PrevUntil) {
			prev, err := s.sealer.Open(r.PrevSealed, secretContext(shop))
			if err != nil {
				return ledger.Invariantf("the previous webhook secret of %s does not open: %v", shop, err)
			}
			secrets = []string{string(prev), string(cur)}
		}
		out[r.MerchantID] = secrets
	}
	return nil
}
