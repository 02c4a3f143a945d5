package ledger

import (
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/paygate/gateway/postings"
)

// Idempotency scopes: who chose the key.
const (
	ScopeShop    = "shop"    // a merchant's Idempotency-Key header
	ScopeNetwork = "network" // a card network message id
	ScopeRail    = "rail"    // a rail partner's message id
	ScopeLedger  = "ledger"  // a direct caller of Append (the CLI, tests)
)

// IdempotencyKeyBytesMax is the longest key accepted (Stripe's limit).
const IdempotencyKeyBytesMax = 255

// Idempotency makes a ledger call safe to repeat. The same key with the same
// fingerprint returns the first call's result and does nothing else; the same
// key with another fingerprint is an ECONFLICT error. Keys are kept for the
// ledger's IdempotencyTTL (48 hours by default, at least 24).
type Idempotency struct {
	Scope string
	Key   string
	// Fingerprint identifies the request; the zero value lets the ledger
	// compute one from the command's content.
	Fingerprint [32]byte
	// Replayed is set by the ledger when the answer is the stored one of
	// an earlier request with this key (nothing new happened). Read it after
	// the call returns.
	Replayed bool
}

type idemKey struct {
	scope       string
	merchant    int64
	key         string
	fingerprint [32]byte
	origin      *Idempotency // the caller's, to report a replay
}

func (k *idemKey) id() string {
	return fmt.Sprintf("%s\x00%d\x00%s", k.scope, k.merchant, k.key)
}

func newIdemKey(merchant int64, in *Idempotency, content func() [32]byte) (*idemKey, error) {
	if in == nil || in.Key == "" {
		return nil, nil
	}
	if len(in.Key) > IdempotencyKeyBytesMax {
		return nil, postings.FieldErrorf("Idempotency-Key", "is longer than %d bytes", IdempotencyKeyBytesMax)
	}
	switch in.Scope {
	case ScopeShop, ScopeNetwork, ScopeRail, ScopeLedger:
	default:
		return nil, fmt.Errorf("ledger: unknown idempotency scope %q", in.Scope)
	}
	k := &idemKey{scope: in.Scope, merchant: merchant, key: in.Key, fingerprint: in.Fingerprint, origin: in}
	if k.fingerprint == ([32]byte{}) {
		k.fingerprint = content()
	}
	return k, nil
}

// Idempotency outcomes stored in idempotency_keys.status.
const (
	idemSucceeded = 0
	idemFailed    = 1
	// idemRead: the key was used by a read (ClaimReadIdempotency). No answer
	// is stored, only that the key belongs to that request.
	idemRead = 2
)

// idemRow is a stored key with the first call's outcome.
type idemRow struct {
	idemKey
	status   int
	response []byte // JSON of the result, or of the *postings.Error
	firstSeq int64  // the journal entries the call wrote, if any
	lastSeq  int64
	isNew    bool // written by this batch, not yet flushed
}

// queueIdempotency queues the read of the batch's keys that are stored and
// unexpired.
// Expiry is judged by the ledger's clock, the one that wrote expires_at, not
// the database's: two clocks that disagree must not revive a key early.
func (tx *Tx) queueIdempotency(p *Pipeline, keys []*idemKey) {
	if len(keys) == 0 {
		return
	}
	scopes := make([]string, len(keys))
	merchants := make([]int64, len(keys))
	names := make([]string, len(keys))
	for i, k := range keys {
		scopes[i], merchants[i], names[i] = k.scope, k.merchant, k.key
	}
	p.Query(stmtLoadIdempotency, func(rows pgx.Rows) error {
		for rows.Next() {
			row := &idemRow{}
			var fp []byte
			var first, last *int64
			if err := rows.Scan(&row.scope, &row.merchant, &row.key, &fp, &row.status, &row.response, &first, &last); err != nil {
				return err
			}
			copy(row.fingerprint[:], fp)
			if first != nil && last != nil {
				row.firstSeq, row.lastSeq = *first, *last
			}
			tx.idem[row.id()] = row
		}
		return nil
	}, scopes, merchants, names, tx.now)
}

// One primary-key probe per key (the lateral subquery, kept apart by
// "offset 0", cannot become a hash join over the whole table).
var stmtLoadIdempotency = NewStmt(`
	select k.scope, k.merchant_id, k.key, k.fingerprint, k.status, k.response, k.first_seq, k.last_seq
	from unnest($1::text[], $2::bigint[], $3::text[]) as v(scope, m, key)
	cross join lateral (
		select * from idempotency_keys k
		where k.scope = v.scope and k.merchant_id = v.m and k.key = v.key and k.expires_at > $4::timestamptz
		offset 0) k`)

// storeIdempotency records a command's outcome under its key, in the batch.
func (tx *Tx) storeIdempotency(k *idemKey, entriesFrom int, val any, err error) {
	row := &idemRow{idemKey: *k, isNew: true}
	if err != nil {
		row.status = idemFailed
		row.response, _ = json.Marshal(postings.AsError(err))
	} else {
		b, merr := json.Marshal(val)
		if merr != nil {
			// A result that cannot be stored cannot be replayed: better to
			// keep no key than a wrong one.
			tx.l.log.Error("idempotent result not storable", "error", merr)
			return
		}
		row.response = b
	}
	if recs := tx.entries[entriesFrom:]; len(recs) > 0 {
		row.firstSeq, row.lastSeq = recordsSeqRange(recs)
	}
	tx.idem[row.id()] = row
	tx.idemRows = append(tx.idemRows, row)
}

// replayer is a core command that replays from the journal what its first
// call wrote (Append), rather than from a stored JSON result.
type replayer interface {
	replay(tx *Tx, row *idemRow) (any, error)
}

// replay answers a repeated key with the first outcome.
func (tx *Tx) replay(cmd Command, k *idemKey, row *idemRow) result {
	if k.origin != nil {
		// The caller reads it only after the answer crosses the result
		// channel, which orders this write before that read.
		k.origin.Replayed = true
	}
	if row.status == idemRead {
		// A read's key holds no answer; the fingerprints differ anyway
		// (run), as the read's path is its own.
		return result{err: errIdemMismatch(row.key)}
	}
	if row.status == idemFailed {
		var e postings.Error
		if err := json.Unmarshal(row.response, &e); err != nil {
			return result{err: fmt.Errorf("ledger: stored idempotent failure: %w", err)}
		}
		return result{err: &e}
	}
	if rp, ok := cmd.(replayer); ok {
		v, err := rp.replay(tx, row)
		return result{val: v, err: err}
	}
	rp, ok := cmd.(Replayer)
	if !ok {
		return result{err: fmt.Errorf("ledger: %T cannot replay an idempotent result", cmd)}
	}
	v, err := rp.Replay(tx, row.response)
	return result{val: v, err: err}
}

// flushIdempotency inserts the new keys. An expired key with the same name is
// replaced; an unexpired one cannot exist, because the merchant's head is
// locked, so a conflict is reported as an error rather than ignored.
func (tx *Tx) flushIdempotency(p *Pipeline) {
	if len(tx.idemRows) == 0 {
		return
	}
	n := len(tx.idemRows)
	scopes, names := make([]string, n), make([]string, n)
	merchants, statuses := make([]int64, n), make([]int64, n)
	fps, responses := make([][]byte, n), make([][]byte, n)
	firsts, lasts := make([]int64, n), make([]int64, n)
	for i, r := range tx.idemRows {
		scopes[i], merchants[i], names[i] = r.scope, r.merchant, r.key
		fps[i] = append([]byte(nil), r.fingerprint[:]...)
		statuses[i] = int64(r.status)
		responses[i] = r.response
		firsts[i], lasts[i] = r.firstSeq, r.lastSeq
	}
	expires := tx.now.Add(tx.l.cfg.IdempotencyTTL)
	p.Query(stmtStoreIdempotency, func(rows pgx.Rows) error {
		var inserted int64
		for rows.Next() {
			if err := rows.Scan(&inserted); err != nil {
				return err
			}
		}
		if inserted != int64(n) {
			return postings.ReasonErrorf(postings.ECONFLICT, postings.ReasonIdempotencyRace,
				"an idempotency key was stored concurrently; retry with the same key")
		}
		return nil
	}, tx.now, expires, scopes, merchants, names, fps, statuses, responses, firsts, lasts)
}

// stmtStoreIdempotency inserts the keys and counts the rows it wrote
// (flushIdempotency).
var stmtStoreIdempotency = NewStmt(`
	with ins as (
		insert into idempotency_keys as k (scope, merchant_id, key, fingerprint, status, response, first_seq, last_seq, created_at, expires_at)
		select v.scope, v.m, v.key, v.fp, v.status, v.resp, nullif(v.first, 0), nullif(v.last, 0), $1::timestamptz, $2::timestamptz
		from unnest($3::text[], $4::bigint[], $5::text[], $6::bytea[], $7::bigint[], $8::bytea[], $9::bigint[], $10::bigint[])
		     as v(scope, m, key, fp, status, resp, first, last)
		on conflict (scope, merchant_id, key) do update
		set fingerprint = excluded.fingerprint, status = excluded.status, response = excluded.response,
		    first_seq = excluded.first_seq, last_seq = excluded.last_seq,
		    created_at = excluded.created_at, expires_at = excluded.expires_at
		where k.expires_at <= $1::timestamptz
		returning 1
	)
	select count(*) from ins`)
