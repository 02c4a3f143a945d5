package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"time"

	"github.com/paygate/gateway/postings"
)

// ClaimReadIdempotency records that a read with no effect (POST
// /shop/card/balance/batch) used a key, so that the key cannot then serve
// another request, and refuses a key that already belongs to another
// request (ECONFLICT idempotency_mismatch, as the writer does). The read's
// answer is not stored: repeating it reads again. A key is one request's,
// whichever endpoint used it first (docs/api.md, "Idempotency").
func (l *Ledger) ClaimReadIdempotency(ctx context.Context, merchant int64, in *Idempotency) error {
	k, err := newIdemKey(merchant, in, func() [32]byte { return [32]byte{} })
	if err != nil || k == nil {
		return err
	}
	now := l.now()
	var fp []byte
	// The insert probes the primary key; a live key of another request is
	// left alone and read back by the second branch (a key that expired is
	// replaced, as flushIdempotency does).
	err = l.db.NewRaw(`
		with ins as (
			insert into idempotency_keys as k (scope, merchant_id, key, fingerprint, status, created_at, expires_at)
			values (?, ?, ?, ?, ?, ?, ?)
			on conflict (scope, merchant_id, key) do update
			set fingerprint = excluded.fingerprint, status = excluded.status, response = null,
			    first_seq = null, last_seq = null, created_at = excluded.created_at, expires_at = excluded.expires_at
			where k.expires_at <= excluded.created_at
			returning k.fingerprint)
		select fingerprint from ins
		union all
		select k.fingerprint from idempotency_keys k
		where k.scope = ? and k.merchant_id = ? and k.key = ? and not exists (select from ins)`,
		k.scope, k.merchant, k.key, k.fingerprint[:], idemRead, now, now.Add(l.cfg.IdempotencyTTL),
		k.scope, k.merchant, k.key).Scan(ctx, &fp)
	if errors.Is(err, sql.ErrNoRows) {
		// Stored by another transaction after this statement's snapshot.
		return postings.ReasonErrorf(postings.ECONFLICT, postings.ReasonIdempotencyRace,
			"an idempotency key was stored concurrently; retry with the same key")
	}
	if err != nil {
		return mapError(err)
	}
	if !bytes.Equal(fp, k.fingerprint[:]) {
		return errIdemMismatch(k.key)
	}
	return nil
}

// errIdemMismatch is the answer to a key used before by another request.
func errIdemMismatch(key string) error {
	return postings.ReasonErrorf(postings.ECONFLICT, postings.ReasonIdempotencyMismatch,
		"Idempotency-Key %q was used with a different request", truncateKey(key))
}

// PruneIdempotency deletes expired keys, at most limit of them, and returns
// how many it deleted. The server calls it periodically.
func (l *Ledger) PruneIdempotency(limit int) (int64, error) {
	res, err := l.db.NewRaw(`
		delete from idempotency_keys
		where ctid in (select ctid from idempotency_keys where expires_at <= ? limit ?)`, l.now(), limit).
		Exec(l.bg())
	if err != nil {
		return 0, mapError(err)
	}
	return res.RowsAffected()
}

// contentFingerprint hashes the canonical encodings of entries, for callers
// that give a key but no fingerprint.
func contentFingerprint(entries []postings.Entry) [32]byte {
	h := sha256.New()
	for i := range entries {
		h.Write(postings.CanonicalEncoding(&postings.Record{Entry: entries[i], CreatedAt: time.Unix(0, 0)}))
		h.Write([]byte{0})
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}
