package ledger

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/formancehq/go-libs/v3/platform/postgres"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/postings"
)

// constraintErrors maps constraint names (every constraint in sql/ is named)
// to the domain error a violation means. A violation of a constraint that
// the writer checks itself first is a second line of defence: reaching it
// means the Go check missed something, and it still refuses the write. The
// domains' tables' constraints are added by New from Domain.Constraints,
// under constraintsMu (domain.go).
var constraintErrors = map[string]*postings.Error{
	"balances_non_negative": {Code: postings.EINSUFFICIENT, Message: "insufficient funds"},
	"merchants_shop_no_key": {Code: postings.ECONFLICT, Reason: postings.ReasonShopNo, Message: "this shop number is taken"},
	"idempotency_keys_pkey": {Code: postings.ECONFLICT, Reason: postings.ReasonIdempotencyRace, Message: "an idempotency key was stored concurrently; retry with the same key"},
}

// retryConstraints are the unique constraints whose violation by a random
// draw runs the batch again with new draws (Domain.RetryConstraints): a
// value drawn at random (a card's PAN) collided with one already stored,
// and running the batch again draws new ones (the chance of drawing one
// twice in a row is negligible; attempts are bounded anyway).
var retryConstraints = map[string]bool{}

// stateErrors maps SQLSTATEs to the domain error they mean. Together with
// constraintErrors and isUnavailable it is the one table of database
// failures; api/envelope.go maps the codes on to HTTP.
var stateErrors = map[string]*postings.Error{
	"55P03": {Code: postings.EUNAVAILABLE, Reason: postings.ReasonLockTimeout,
		Message: "the database did not grant a lock in time (lock_timeout); nothing was done"},
	"57014": {Code: postings.EUNAVAILABLE, Reason: postings.ReasonStatementTimeout,
		Message: "a database statement was cancelled (statement_timeout, or the request ended); nothing was done"},
	"40001": {Code: postings.EUNAVAILABLE, Reason: postings.ReasonContention,
		Message: "the database could not serialize concurrent transactions; nothing was done"},
	"40P01": {Code: postings.EUNAVAILABLE, Reason: postings.ReasonContention,
		Message: "the database detected a deadlock between transactions; nothing was done"},
}

// MapError turns a database error into a domain error: constraint
// violations by name, time-outs and contention by SQLSTATE (stateErrors),
// unreachable database into EUNAVAILABLE. Contention stays retryable for
// the writer (isTransient). The domains call it on their statements' errors.
func MapError(err error) error { return mapError(err) }

// mapError is MapError, under the name the core's files use.
func mapError(err error) error {
	if err == nil {
		return nil
	}
	var pe *postings.Error
	if errors.As(err, &pe) || isOutcomeUnknown(err) {
		return err // a COMMIT of unknown outcome keeps its identity for the writer
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.ConstraintName != "" {
		constraintsMu.RLock()
		de, ok := constraintErrors[pg.ConstraintName]
		constraintsMu.RUnlock()
		if ok {
			c := *de
			return &c
		}
	}
	if isFence(pg) {
		return &postings.Error{Code: postings.EUNAVAILABLE, Reason: postings.ReasonMerchantMoving, Message: "the merchant is moving to another cell; nothing was done"}
	}
	if pg != nil {
		if de, ok := stateErrors[pg.Code]; ok {
			c := *de
			return &c
		}
	}
	if isUnavailable(err) {
		return &postings.Error{Code: postings.EUNAVAILABLE, Message: "the database is unavailable"}
	}
	resolved := postgres.ResolveError(err)
	if errors.Is(resolved, postgres.ErrNotFound) {
		return postings.Errorf(postings.ENOTFOUND, "not found")
	}
	return resolved
}

// isFence: a move's fence refused the batch (sql/0037, raised as
// lock_not_available): that merchant's command only (runBatch splits).
func isFence(pg *pgconn.PgError) bool {
	return pg != nil && pg.Code == "55P03" && strings.Contains(pg.Where, "cellmove_fence")
}

// isTransient reports errors after which the same batch may simply be tried
// again: PostgreSQL aborted it (deadlock, serialization failure) or the
// connection broke before COMMIT was sent. A lock or statement time-out is
// not: the batch already waited its whole allowance, and trying again would
// make the caller wait a multiple of it; it is answered at once
// (EUNAVAILABLE), and the caller retries with its key.
func isTransient(err error) bool {
	if isOutcomeUnknown(err) {
		return false
	}
	if errors.Is(err, postgres.ErrDeadlockDetected) || errors.Is(err, postgres.ErrSerialization) ||
		isReason(err, postings.ReasonContention) {
		return true
	}
	if isReason(err, postings.ReasonLockTimeout) || isReason(err, postings.ReasonStatementTimeout) {
		return false
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch pg.Code {
		case "40001", "40P01":
			return true
		case "23505":
			constraintsMu.RLock()
			defer constraintsMu.RUnlock()
			return retryConstraints[pg.ConstraintName]
		}
	}
	return postings.ErrorCode(err) == postings.EUNAVAILABLE || isUnavailable(err)
}

// isUnavailable reports a database that cannot be reached or went away.
func isUnavailable(err error) bool {
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		// Class 08: connection exception; 57P01-03: the server is shutting
		// down or starting; 53300: too many connections; 25006: a write
		// reached a server that no longer takes writes, a primary being
		// demoted (its connection is dropped, readOnlyServer in db.go, and
		// the next one finds the new primary).
		return strings.HasPrefix(pg.Code, "08") || pg.Code == "57P01" || pg.Code == "57P02" ||
			pg.Code == "57P03" || pg.Code == "53300" || pg.Code == database.SQLStateReadOnly
	}
	msg := err.Error()
	return strings.Contains(msg, "conn closed") || strings.Contains(msg, "connection refused") ||
		strings.Contains(msg, "broken pipe") || strings.Contains(msg, "connection reset")
}

// isReason reports a *postings.Error of reason r.
func isReason(err error, r postings.Reason) bool {
	var pe *postings.Error
	return errors.As(err, &pe) && pe.Reason == r
}

// isOutage reports a database that is unavailable as a whole (unreachable,
// restarting, out of connections, or a COMMIT with an unknown outcome), as
// opposed to one batch's time-out or contention: after an outage the
// writer fails the commands queued behind, which would fail the same way.
func isOutage(err error) bool {
	if postings.ErrorCode(err) != postings.EUNAVAILABLE {
		return false
	}
	return !isReason(err, postings.ReasonLockTimeout) && !isReason(err, postings.ReasonStatementTimeout) && !isReason(err, postings.ReasonContention) &&
		!isReason(err, postings.ReasonMerchantMoving) // one merchant's fence: the others' queued commands go on
}
