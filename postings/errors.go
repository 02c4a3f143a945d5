package postings

import (
	"errors"
	"fmt"
)

// Code classifies an Error. Every layer uses these codes: the ledger maps
// PostgreSQL failures onto them, and the API maps them onto HTTP statuses and
// the business codes of docs/errors.md in one table.
type Code string

// Error codes. The comment says what a caller may do about each.
const (
	// EINVALID: the input is malformed (bad type, missing field, too many
	// decimals, unknown currency). Fix the request; retrying it is useless.
	EINVALID Code = "invalid"
	// ENOTFOUND: the object does not exist, or belongs to someone else.
	ENOTFOUND Code = "not_found"
	// ECONFLICT: the request contradicts the current state (an idempotency key
	// reused with another body, a duplicate reference).
	ECONFLICT Code = "conflict"
	// EINPROGRESS: the same idempotency key is being executed right now.
	EINPROGRESS Code = "in_progress"
	// EINSUFFICIENT: a constrained account would go below zero.
	EINSUFFICIENT Code = "insufficient_funds"
	// ELIMIT: a configured limit (KYB tier, card balance, daily amount) would
	// be exceeded.
	ELIMIT Code = "limit_exceeded"
	// EFORBIDDEN: the operation is not allowed for this merchant (BIN not open,
	// currency not enabled).
	EFORBIDDEN Code = "forbidden"
	// ESTATE: the object is in a state that refuses the operation (card frozen
	// or cancelled, remittance already final).
	ESTATE Code = "bad_state"
	// EUNAVAILABLE: a dependency (the database) is unreachable; the outcome of
	// the request is unknown only if it says so. Retry with the same key.
	EUNAVAILABLE Code = "unavailable"
	// EUNAUTHENTICATED: the caller's credentials do not identify a merchant
	// (unknown shop or wrong key; the two are never told apart).
	EUNAUTHENTICATED Code = "unauthenticated"
	// EINTERNAL: a bug or a broken invariant. Never shown with its details.
	EINTERNAL Code = "internal"
)

// Error is the one application error type. Field names the offending input
// field (JSON name) when there is one; Reason is a stable machine-readable
// detail inside the code (for instance ReasonCardFrozen inside ESTATE), which
// the API uses to pick the business code.
type Error struct {
	Code    Code
	Reason  Reason
	Field   string
	Message string
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %s", e.Code, e.Field, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Errorf builds an Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// FieldErrorf builds an EINVALID error that names the offending field.
func FieldErrorf(field, format string, args ...any) *Error {
	return &Error{Code: EINVALID, Field: field, Message: fmt.Sprintf(format, args...)}
}

// ReasonErrorf builds an Error with a reason inside its code.
func ReasonErrorf(code Code, reason Reason, format string, args ...any) *Error {
	return &Error{Code: code, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err, EINTERNAL for anything that is not an
// *Error, and "" for nil.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// AsError returns err as an *Error; anything else becomes an EINTERNAL error
// whose message hides the details.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: EINTERNAL, Message: "internal error"}
}

// WithField returns a copy of err naming field, when err is an *Error that
// does not name one yet. It lets a parser that knows nothing of the request
// shape report the JSON field it was called for.
func WithField(err error, field string) error {
	var e *Error
	if !errors.As(err, &e) || e.Field != "" {
		return err
	}
	c := *e
	c.Field = field
	return &c
}
