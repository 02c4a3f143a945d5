package ledger

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/postings"
)

// OutsideKey is the Idempotency-Key of a change made outside the writer, in
// its caller's own transaction (a merchant's key roll, internal/merchant):
// the core keeps the idempotency_keys table and what a key means, the caller
// its change and the answer it stores. Both run in the caller's transaction,
// after it has locked what the change serialises on, so that a repeated key
// finds the first request's row.
type OutsideKey struct {
	k   *idemKey
	ttl time.Duration
}

// OutsideKey returns the key of idem for merchant, the request identified by
// fingerprint; nil without a key.
func (l *Ledger) OutsideKey(merchant int64, idem *Idempotency, fingerprint func() [32]byte) (*OutsideKey, error) {
	k, err := newIdemKey(merchant, idem, fingerprint)
	if err != nil || k == nil {
		return nil, err
	}
	return &OutsideKey{k: k, ttl: l.cfg.IdempotencyTTL}, nil
}

// Replay reads the live key in tx: the stored answer of the same request
// (found true), nothing when the key is new, and ECONFLICT
// idempotency_mismatch for a key that belongs to another request.
func (o *OutsideKey) Replay(ctx context.Context, tx bun.IDB, now time.Time) (answer []byte, found bool, err error) {
	k := o.k
	var row struct {
		Fingerprint []byte `bun:"fingerprint"`
		Status      int    `bun:"status"`
		Response    []byte `bun:"response"`
	}
	err = tx.NewRaw(`select fingerprint, status, response from idempotency_keys
		where scope = ? and merchant_id = ? and key = ? and expires_at > ?`, k.scope, k.merchant, k.key, now).Scan(ctx, &row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, mapError(err)
	}
	if row.Status != idemSucceeded || !bytes.Equal(row.Fingerprint, k.fingerprint[:]) {
		return nil, false, errIdemMismatch(k.key)
	}
	return row.Response, true, nil
}

// Store keeps answer under the key in tx (an expired key of the same name is
// replaced); ECONFLICT idempotency_race when another transaction stored it
// first.
func (o *OutsideKey) Store(ctx context.Context, tx bun.IDB, answer []byte, now time.Time) error {
	k := o.k
	res, err := tx.NewRaw(`
		insert into idempotency_keys as k (scope, merchant_id, key, fingerprint, status, response, created_at, expires_at)
		values (?, ?, ?, ?, ?, ?, ?, ?)
		on conflict (scope, merchant_id, key) do update
		set fingerprint = excluded.fingerprint, status = excluded.status, response = excluded.response,
		    first_seq = null, last_seq = null, created_at = excluded.created_at, expires_at = excluded.expires_at
		where k.expires_at <= excluded.created_at`,
		k.scope, k.merchant, k.key, k.fingerprint[:], idemSucceeded, answer, now, now.Add(o.ttl)).Exec(ctx)
	if err != nil {
		return mapError(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return postings.ReasonErrorf(postings.ECONFLICT, postings.ReasonIdempotencyRace,
			"an idempotency key was stored concurrently; retry with the same key")
	}
	return nil
}
