package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/postings"
)

// Key rolls (docs/security.md, "Rolling keys"). A merchant replaces its
// public key (which authenticates /shop requests) or its callback signing
// key with a new random one; the key it replaces stays valid for an overlap
// so that its servers can switch without a failed request or a rejected
// callback. Only one previous key is kept: a second roll during an overlap
// ends the oldest key at once (the key being replaced becomes the previous
// one). The new key is returned once and never stored in the clear: the
// public key as its SHA-256, the signing key sealed, as at creation.

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
func (l *Ledger) RollPublicKey(ctx context.Context, merchant int64, overlap time.Duration, idem *Idempotency) (*KeyRoll, error) {
	return l.rollKey(ctx, merchant, KeyPublic, overlap, idem)
}

// RollSigningKey replaces the merchant's callback signing key; callbacks
// are signed with both keys during overlap (docs/callbacks.md, "Rolling the
// signing key").
func (l *Ledger) RollSigningKey(ctx context.Context, merchant int64, overlap time.Duration, idem *Idempotency) (*KeyRoll, error) {
	return l.rollKey(ctx, merchant, KeySigning, overlap, idem)
}

// The statements of a roll: the current key becomes the previous one (or
// none, for overlap 0), the new one current. SET reads the row as it was,
// so the current key moves before it is replaced. Arguments: previous
// until (null for none), the new key's stored form, the merchant.
const (
	rollPublicSQL = `update merchants set
		public_key_prev_sha256 = case when ?::timestamptz is null then null else public_key_sha256 end,
		public_key_prev_until = ?::timestamptz, public_key_sha256 = ?
		where id = ? returning shop_no`
	rollSigningSQL = `update merchants set
		private_key_prev_sealed = case when ?::timestamptz is null then null else private_key_sealed end,
		private_key_prev_until = ?::timestamptz, private_key_sealed = ?
		where id = ? returning shop_no`
)

func (l *Ledger) rollKey(ctx context.Context, merchant int64, kind string, overlap time.Duration, idem *Idempotency) (*KeyRoll, error) {
	if err := CheckKeyOverlap("overlapHours", overlap); err != nil {
		return nil, err
	}
	if l.cfg.Sealer == nil {
		return nil, errors.New("ledger: no data key configured")
	}
	k, err := newIdemKey(merchant, idem, func() [32]byte { return sha256.Sum256([]byte("roll:" + kind)) })
	if err != nil {
		return nil, err
	}
	now := l.now()
	roll := &KeyRoll{Kind: kind, RolledAt: now}
	var prevUntil *time.Time
	if overlap > 0 {
		t := now.Add(overlap)
		prevUntil = &t
	}
	roll.PreviousValidUntil = prevUntil
	err = l.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var shopNo string
		// The merchant's row is locked first: two rolls of one merchant run
		// one after the other, and a repeated key finds the first one's row.
		if err := tx.NewRaw(`select shop_no from merchants where id = ? for update`, merchant).Scan(ctx, &shopNo); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return postings.ReasonErrorf(postings.ENOTFOUND, postings.ReasonMerchant, "merchant not found")
			}
			return mapError(err)
		}
		if k != nil {
			replayed, err := loadRollReplay(ctx, tx, k, now)
			if err != nil || replayed != nil {
				roll = replayed
				return err
			}
		}
		switch kind {
		case KeyPublic:
			roll.Key = "pk_" + randomToken(32)
			sum := sha256.Sum256([]byte(roll.Key))
			_, err = tx.NewRaw(rollPublicSQL, prevUntil, prevUntil, sum[:], merchant).Exec(ctx)
		case KeySigning:
			roll.Key = "sk_" + randomToken(32)
			_, err = tx.NewRaw(rollSigningSQL, prevUntil, prevUntil,
				l.cfg.Sealer.Seal([]byte(roll.Key), "merchant-private-key:"+shopNo), merchant).Exec(ctx)
		default:
			return fmt.Errorf("ledger: no key %q to roll", kind)
		}
		if err != nil {
			return mapError(err)
		}
		if k == nil {
			return nil
		}
		return storeRollReplay(ctx, tx, k, roll, now, l.cfg.IdempotencyTTL)
	})
	l.auth.forget(merchant)
	if err != nil {
		return nil, err
	}
	if roll.Replayed && idem != nil {
		idem.Replayed = true
	}
	return roll, nil
}

// loadRollReplay finds the live key of an earlier request: the same request
// gets the first roll back (without its key), another one a conflict.
func loadRollReplay(ctx context.Context, tx bun.Tx, k *idemKey, now time.Time) (*KeyRoll, error) {
	var row struct {
		Fingerprint []byte `bun:"fingerprint"`
		Status      int    `bun:"status"`
		Response    []byte `bun:"response"`
	}
	err := tx.NewRaw(`select fingerprint, status, response from idempotency_keys
		where scope = ? and merchant_id = ? and key = ? and expires_at > ?`, k.scope, k.merchant, k.key, now).Scan(ctx, &row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, mapError(err)
	}
	if row.Status != idemSucceeded || !bytes.Equal(row.Fingerprint, k.fingerprint[:]) {
		return nil, errIdemMismatch(k.key)
	}
	var r KeyRoll
	if err := json.Unmarshal(row.Response, &r); err != nil {
		return nil, fmt.Errorf("ledger: stored key roll: %w", err)
	}
	r.RolledAt = r.RolledAt.UTC()
	if r.PreviousValidUntil != nil {
		t := r.PreviousValidUntil.UTC()
		r.PreviousValidUntil = &t
	}
	r.Replayed = true
	return &r, nil
}

// storeRollReplay keeps the roll's answer, without its key, under the
// Idempotency-Key (an expired key of the same name is replaced).
func storeRollReplay(ctx context.Context, tx bun.Tx, k *idemKey, roll *KeyRoll, now time.Time, ttl time.Duration) error {
	resp, err := json.Marshal(roll)
	if err != nil {
		return err
	}
	res, err := tx.NewRaw(`
		insert into idempotency_keys as k (scope, merchant_id, key, fingerprint, status, response, created_at, expires_at)
		values (?, ?, ?, ?, ?, ?, ?, ?)
		on conflict (scope, merchant_id, key) do update
		set fingerprint = excluded.fingerprint, status = excluded.status, response = excluded.response,
		    first_seq = null, last_seq = null, created_at = excluded.created_at, expires_at = excluded.expires_at
		where k.expires_at <= excluded.created_at`,
		k.scope, k.merchant, k.key, k.fingerprint[:], idemSucceeded, resp, now, now.Add(ttl)).Exec(ctx)
	if err != nil {
		return mapError(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return postings.ReasonErrorf(postings.ECONFLICT, postings.ReasonIdempotencyRace,
			"an idempotency key was stored concurrently; retry with the same key")
	}
	return nil
}

// KeyState is what a merchant may know of its keys: when each previous key
// stops being valid (nil: there is none, or it has ended). Never a key.
type KeyState struct {
	PublicPreviousValidUntil  *time.Time
	SigningPreviousValidUntil *time.Time
}

// KeyState reads the overlaps in progress of a merchant's keys.
func (l *Ledger) KeyState(ctx context.Context, merchant int64) (*KeyState, error) {
	var r struct {
		Public  *time.Time `bun:"public_key_prev_until"`
		Signing *time.Time `bun:"private_key_prev_until"`
	}
	err := l.db.NewRaw(`select public_key_prev_until, private_key_prev_until from merchants where id = ?`, merchant).Scan(ctx, &r)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, postings.ReasonErrorf(postings.ENOTFOUND, postings.ReasonMerchant, "merchant not found")
	}
	if err != nil {
		return nil, mapError(err)
	}
	now := l.now()
	live := func(t *time.Time) *time.Time {
		if t == nil || !now.Before(*t) {
			return nil
		}
		u := t.UTC()
		return &u
	}
	return &KeyState{PublicPreviousValidUntil: live(r.Public), SigningPreviousValidUntil: live(r.Signing)}, nil
}
