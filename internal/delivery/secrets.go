package delivery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/api/client/receiver/signature"
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
	roll, until, err := s.newRoll(overlap)
	if err != nil {
		return nil, err
	}
	secret, now := roll.Secret, roll.RolledAt
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
		roll.PreviousValidUntil = until
		_, err = applyRoll(ctx, tx, "webhook_secrets", "merchant_id = ?", []any{merchantID}, sealed, now, until)
		return err
	})
	if err != nil {
		return nil, ledger.MapError(err)
	}
	s.secrets.forget(secretEndpoint{merchant: merchantID, endpoint: 1})
	return roll, nil
}

// newRoll checks overlap and makes a new secret, rolled now, with the end
// of its overlap (nil: none).
func (s *Store) newRoll(overlap time.Duration) (*SecretRoll, *time.Time, error) {
	if err := merchant.CheckKeyOverlap("overlapHours", overlap); err != nil {
		return nil, nil, err
	}
	if s.sealer == nil {
		return nil, nil, errors.New("delivery: no data key configured")
	}
	secret, err := signature.NewSecret()
	if err != nil {
		return nil, nil, err
	}
	roll := &SecretRoll{Secret: secret, RolledAt: s.l.Now()}
	if overlap <= 0 {
		return roll, nil, nil
	}
	until := roll.RolledAt.Add(overlap)
	return roll, &until, nil
}

// applyRoll puts sealed in place of the current secret of table's row
// where (args), keeping beside it until `until` (nil: none) the older
// secret: during an overlap the previous one, which every receiver has,
// else the current one. It reports whether a row was rolled.
func applyRoll(ctx context.Context, tx bun.Tx, table, where string, args []any, sealed []byte, now time.Time, until *time.Time) (bool, error) {
	var prevUntil []*time.Time
	if err := tx.NewRaw(`select secret_prev_until from `+table+` where `+where+` for update`, args...).Scan(ctx, &prevUntil); err != nil {
		return false, err
	}
	if len(prevUntil) != 1 {
		return false, nil
	}
	keep := "secret_sealed"
	if prevUntil[0] != nil && now.Before(*prevUntil[0]) {
		keep = "secret_prev_sealed"
	}
	_, err := tx.NewRaw(`update `+table+` set
		secret_prev_sealed = case when ?::timestamptz is null then null else `+keep+` end,
		secret_prev_until = ?::timestamptz, secret_sealed = ?, rolled_at = ? where `+where,
		append([]any{until, until, sealed, now}, args...)...).Exec(ctx)
	return err == nil, err
}

// rollSecret rolls the secret of endpoint no (> 1) of the merchant.
func (s *Store) rollSecret(ctx context.Context, merchantID int64, no int, overlap time.Duration) (*SecretRoll, error) {
	roll, until, err := s.newRoll(overlap)
	if err != nil {
		return nil, err
	}
	secret, now := roll.Secret, roll.RolledAt
	roll.PreviousValidUntil = until
	err = s.l.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var shopNo string
		if err := tx.NewRaw(`select shop_no from merchants where id = ?`, merchantID).Scan(ctx, &shopNo); err != nil {
			return err
		}
		ok, err := applyRoll(ctx, tx, "webhook_endpoints", "merchant_id = ? and endpoint_no = ? and deleted_at is null",
			[]any{merchantID, no}, s.sealer.Seal([]byte(secret), endpointSecretContext(shopNo, no)), now, until)
		if err == nil && !ok {
			err = errNoEndpoint("")
		}
		return err
	})
	if err != nil {
		return nil, ledger.MapError(err)
	}
	s.secrets.forget(secretEndpoint{merchant: merchantID, endpoint: no})
	return roll, nil
}

// sealedSecrets is the secret row of a claimed delivery's endpoint, as
// the claim statement returns it (RolledAt nil: endpoint one of a merchant
// created before sql/0020 has no secret yet).
type sealedSecrets struct {
	MerchantID int64
	ShopNo     string
	Endpoint   int
	RolledAt   *time.Time
	Sealed     []byte
	PrevSealed []byte
	PrevUntil  *time.Time
}

// secretsInForce returns the endpoint's secrets in force at now, oldest
// first: from the cache when they were opened at the same roll, else
// opened now and kept. A merchant without a secret gets its first one
// here: nobody has seen it, so the merchant rolls it to read one, and the
// gateway's deliveries carry the Standard Webhooks headers from the start.
func (s *Store) secretsInForce(ctx context.Context, r sealedSecrets, now time.Time) ([]string, error) {
	if r.RolledAt == nil {
		if err := s.firstSecret(ctx, &r); err != nil {
			return nil, err
		}
	}
	k := secretEndpoint{merchant: r.MerchantID, endpoint: r.Endpoint}
	if o, ok := s.secrets.get(k, *r.RolledAt); ok {
		return o.inForce(now), nil
	}
	sctx := endpointSecretContext(r.ShopNo, r.Endpoint)
	cur, err := s.sealer.Open(r.Sealed, sctx)
	if err != nil {
		return nil, ledger.Invariantf("the webhook secret of %s endpoint %d does not open: %v", r.ShopNo, r.Endpoint, err)
	}
	o := openedSecrets{rolledAt: *r.RolledAt, prevUntil: r.PrevUntil, cur: string(cur)}
	if r.PrevSealed != nil {
		prev, err := s.sealer.Open(r.PrevSealed, sctx)
		if err != nil {
			return nil, ledger.Invariantf("the previous webhook secret of %s endpoint %d does not open: %v", r.ShopNo, r.Endpoint, err)
		}
		o.prev = string(prev)
	}
	s.secrets.put(k, o)
	return o.inForce(now), nil
}

// firstSecret gives endpoint one of r's merchant its first secret and
// reads it back into r. Two dispatchers may both make one: the first wins,
// and both read it back.
func (s *Store) firstSecret(ctx context.Context, r *sealedSecrets) error {
	secret, err := signature.NewSecret()
	if err != nil {
		return err
	}
	if _, err := s.l.DB().NewRaw(`insert into webhook_secrets (merchant_id, secret_sealed, rolled_at) values (?, ?, ?)
		on conflict (merchant_id) do nothing`, r.MerchantID, s.sealer.Seal([]byte(secret), secretContext(r.ShopNo)), s.l.Now()).Exec(ctx); err != nil {
		return ledger.MapError(err)
	}
	var row struct {
		RolledAt   time.Time  `bun:"rolled_at"`
		Sealed     []byte     `bun:"secret_sealed"`
		PrevSealed []byte     `bun:"secret_prev_sealed"`
		PrevUntil  *time.Time `bun:"secret_prev_until"`
	}
	if err := s.l.DB().NewRaw(`select rolled_at, secret_sealed, secret_prev_sealed, secret_prev_until
		from webhook_secrets where merchant_id = ?`, r.MerchantID).Scan(ctx, &row); err != nil {
		return ledger.MapError(err)
	}
	r.RolledAt, r.Sealed, r.PrevSealed, r.PrevUntil = &row.RolledAt, row.Sealed, row.PrevSealed, row.PrevUntil
	return nil
}

// endpointSecretContext is the sealer's associated data of an endpoint's
// secret: endpoint one keeps the merchant's (sealed before endpoints
// existed); another endpoint's adds its number, so a sealed secret moved
// to another endpoint's row does not open either.
func endpointSecretContext(shopNo string, endpoint int) string {
	if endpoint == 1 {
		return secretContext(shopNo)
	}
	return fmt.Sprintf("%s/endpoint/%d", secretContext(shopNo), endpoint)
}
