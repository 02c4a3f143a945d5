package merchant

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Key rolls (docs/security.md, "Rolling keys"). A merchant replaces its
// public key (which authenticates /shop requests) or its callback signing
// key with a new random one; the key it replaces stays valid for an overlap
// so that its servers can switch without a failed request or a rejected
// callback. At most two keys are valid at once, so a second roll during an
// overlap ends one of them at once, and keeps the one the merchant is sure
// to hold, for the new overlap:
//   - the public key: the key that authenticated the roll (heldPrevious
//     says it was the previous one). A merchant whose first roll's answer
//     was lost, and who rolls again with its old key, keeps that old key and
//     loses only the one it never saw. The operator's roll (no key) keeps
//     the current one.
//   - the signing key: the older one, which X-Sign carries during the
//     overlap and which every receiver has; the newer one, which receivers
//     may not have been given yet, ends.
//
// Outside an overlap, the current key becomes the previous one. The new key
// is returned once and never stored in the clear: the public key as its
// SHA-256, the signing key sealed, as at creation.

// The overlap of a roll.
const (
	KeyOverlapDefault = 24 * time.Hour
	KeyOverlapMax     = 7 * 24 * time.Hour
)

// Which key a roll replaces.
const (
	KeyPublic  = "public"
	KeySigning = "signing"
)

// KeyRoll is the outcome of a roll. Key is the new key, set only in the
// answer of the call that made it: a replay of the same Idempotency-Key
// answers the rest with Key empty, because a key is shown once.
type KeyRoll struct {
	Kind string `json:"kind"` // KeyPublic or KeySigning
	// Key is never marshalled: the stored replay answer must not hold it.
	Key      string    `json:"-"`
	RolledAt time.Time `json:"rolledAt"`
	// PreviousValidUntil is the end of the overlap; nil when the roll ended
	// the replaced key at once (overlap 0).
	PreviousValidUntil *time.Time `json:"previousValidUntil"`
	Replayed           bool       `json:"-"`
}

// CheckKeyOverlap refuses an overlap outside [0, KeyOverlapMax].
func CheckKeyOverlap(field string, d time.Duration) error {
	if d < 0 || d > KeyOverlapMax {
		return postings.FieldErrorf(field, "must be from 0 to %d hours", int(KeyOverlapMax/time.Hour))
	}
	return nil
}

// RollPublicKey replaces the merchant's public key; the old one keeps
// authenticating for overlap (0: not at all). With idem, a repeat of the
// same request answers the first roll without its key and rolls nothing.
func (s *Service) RollPublicKey(ctx context.Context, merchant int64, overlap time.Duration, heldPrevious bool, idem *ledger.Idempotency) (*KeyRoll, error) {
	return s.rollKey(ctx, merchant, KeyPublic, overlap, heldPrevious, idem)
}

// RollSigningKey replaces the merchant's callback signing key; callbacks
// are signed with both keys during overlap (docs/callbacks.md, "Rolling the
// signing key").
func (s *Service) RollSigningKey(ctx context.Context, merchant int64, overlap time.Duration, idem *ledger.Idempotency) (*KeyRoll, error) {
	return s.rollKey(ctx, merchant, KeySigning, overlap, true, idem)
}

// The statements of a roll, by key and by which key stays beside the new
// one: the current (it becomes the previous one) or the previous (it stays,
// with the new overlap's end). Overlap 0 keeps none. SET reads the row as it
// was, so the current key moves before it is replaced. Arguments: previous
// until (null for none) twice, the new key's stored form, the merchant.
var rollSQL = map[string]map[bool]string{
	KeyPublic: {
		false: `update merchants set
			public_key_prev_sha256 = case when ?::timestamptz is null then null else public_key_sha256 end,
			public_key_prev_until = ?::timestamptz, public_key_sha256 = ? where id = ?`,
		true: `update merchants set
			public_key_prev_sha256 = case when ?::timestamptz is null then null else public_key_prev_sha256 end,
			public_key_prev_until = ?::timestamptz, public_key_sha256 = ? where id = ?`,
	},
	KeySigning: {
		false: `update merchants set
			private_key_prev_sealed = case when ?::timestamptz is null then null else private_key_sealed end,
			private_key_prev_until = ?::timestamptz, private_key_sealed = ? where id = ?`,
		true: `update merchants set
			private_key_prev_sealed = case when ?::timestamptz is null then null else private_key_prev_sealed end,
			private_key_prev_until = ?::timestamptz, private_key_sealed = ? where id = ?`,
	},
}

func (s *Service) rollKey(ctx context.Context, merchant int64, kind string, overlap time.Duration, keepPrevious bool, idem *ledger.Idempotency) (*KeyRoll, error) {
	if err := CheckKeyOverlap("overlapHours", overlap); err != nil {
		return nil, err
	}
	if s.sealer == nil {
		return nil, errors.New("merchant: no data key configured")
	}
	k, err := s.l.OutsideKey(merchant, idem, func() [32]byte { return sha256.Sum256([]byte("roll:" + kind)) })
	if err != nil {
		return nil, err
	}
	now := s.l.Now()
	roll := &KeyRoll{Kind: kind, RolledAt: now}
	var prevUntil *time.Time
	if overlap > 0 {
		t := now.Add(overlap)
		prevUntil = &t
	}
	roll.PreviousValidUntil = prevUntil
	err = s.l.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var row struct {
			ShopNo       string     `bun:"shop_no"`
			PublicUntil  *time.Time `bun:"public_key_prev_until"`
			SigningUntil *time.Time `bun:"private_key_prev_until"`
		}
		// The merchant's row is locked first: two rolls of one merchant run
		// one after the other, and a repeated key finds the first one's row.
		if err := tx.NewRaw(`select shop_no, public_key_prev_until, private_key_prev_until from merchants
			where id = ? for update`, merchant).Scan(ctx, &row); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return postings.ReasonErrorf(postings.ENOTFOUND, postings.ReasonMerchant, "merchant not found")
			}
			return ledger.MapError(err)
		}
		if k != nil {
			// The same request gets the first roll back (without its key),
			// another one a conflict.
			answer, found, err := k.Replay(ctx, tx, now)
			if err != nil {
				return err
			}
			if found {
				roll, err = rollReplay(answer)
				return err
			}
		}
		// The previous key stays only while its overlap runs.
		until := row.PublicUntil
		if kind == KeySigning {
			until = row.SigningUntil
		}
		keep := keepPrevious && until != nil && now.Before(*until)
		var stored []byte
		switch kind {
		case KeyPublic:
			roll.Key = "pk_" + randomToken(32)
			sum := sha256.Sum256([]byte(roll.Key))
			stored = sum[:]
		case KeySigning:
			roll.Key = "sk_" + randomToken(32)
			stored = s.sealer.SealSigningKey(roll.Key, row.ShopNo)
		default:
			return fmt.Errorf("merchant: no key %q to roll", kind)
		}
		_, err = tx.NewRaw(rollSQL[kind][keep], prevUntil, prevUntil, stored, merchant).Exec(ctx)
		if err != nil {
			return ledger.MapError(err)
		}
		if k == nil {
			return nil
		}
		// The roll's answer, without its key, under the Idempotency-Key.
		answer, err := json.Marshal(roll)
		if err != nil {
			return err
		}
		return k.Store(ctx, tx, answer, now)
	})
	s.auth.forget(merchant)
	if err != nil {
		return nil, err
	}
	if roll.Replayed && idem != nil {
		idem.Replayed = true
	}
	return roll, nil
}

// rollReplay is the first roll of a repeated request, without its key.
func rollReplay(answer []byte) (*KeyRoll, error) {
	var r KeyRoll
	if err := json.Unmarshal(answer, &r); err != nil {
		return nil, fmt.Errorf("merchant: stored key roll: %w", err)
	}
	r.RolledAt = r.RolledAt.UTC()
	if r.PreviousValidUntil != nil {
		t := r.PreviousValidUntil.UTC()
		r.PreviousValidUntil = &t
	}
	r.Replayed = true
	return &r, nil
}

// KeyState is what a merchant may know of its keys: when each previous key
// stops being valid (nil: there is none, or it has ended). Never a key.
type KeyState struct {
	PublicPreviousValidUntil  *time.Time
	SigningPreviousValidUntil *time.Time
}

// KeyState reads the overlaps in progress of a merchant's keys.
func (s *Service) KeyState(ctx context.Context, merchant int64) (*KeyState, error) {
	var r struct {
		Public  *time.Time `bun:"public_key_prev_until"`
		Signing *time.Time `bun:"private_key_prev_until"`
	}
	err := s.l.DB().NewRaw(`select public_key_prev_until, private_key_prev_until from merchants where id = ?`, merchant).Scan(ctx, &r)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, postings.ReasonErrorf(postings.ENOTFOUND, postings.ReasonMerchant, "merchant not found")
	}
	if err != nil {
		return nil, ledger.MapError(err)
	}
	now := s.l.Now()
	live := func(t *time.Time) *time.Time {
		if t == nil || !now.Before(*t) {
			return nil
		}
		u := t.UTC()
		return &u
	}
	return &KeyState{PublicPreviousValidUntil: live(r.Public), SigningPreviousValidUntil: live(r.Signing)}, nil
}
