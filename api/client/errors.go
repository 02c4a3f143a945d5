package client

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// Code is the envelope's code: 200 for success, a business code (999,
// 1001…) for a business failure answered with HTTP 200, and the HTTP status
// again for an HTTP failure (docs/errors.md). A Code is also an error
// value to match with errors.Is:
//
//	if errors.Is(err, client.CodeCardNotFound) { … }
type Code int

// The codes of docs/errors.md. Decide on the code, never on the message.
const (
	CodeOK                    Code = 200
	CodeFailure               Code = 999  // any other business failure
	CodeInsufficientFunds     Code = 1001 // funding account, or the card for transfer OUT
	CodeCardNotFound          Code = 1002 // unknown, or another merchant's
	CodeCardFrozen            Code = 1003
	CodeCardCancelled         Code = 1004
	CodeCurrencyNotAllowed    Code = 1005
	CodeBINNotOpen            Code = 1006
	CodeLimitExceeded         Code = 1007
	CodeIdempotencyConflict   Code = 1008 // the key was used with another request
	CodeInProgress            Code = 1009 // a request with this key is running: retry later with it
	CodeFXUnavailable         Code = 1010
	CodeRemittanceNotFound    Code = 1101
	CodeAuthorizationNotFound Code = 1201 // internal network API
	CodeAuthorizationClosed   Code = 1202 // internal network API
	CodeEventNotFound         Code = 1301 // a webhook event: unknown, or another merchant's
)

func (c Code) Error() string { return fmt.Sprintf("code %d", int(c)) }

// Error is every failure of a call: an answer other than HTTP 200 with code
// 200, or no usable answer at all.
type Error struct {
	// Status is the HTTP status; 0 when no HTTP answer came (Err says why).
	Status int
	// Code is the envelope's code: a business code with Status 200, the
	// status again for an HTTP failure; 0 when the body was no envelope.
	Code Code
	// Field is the field, header or parameter a 400 names (the message
	// starts with it: "amount: USD allows at most 2 decimals"); "" otherwise.
	Field string
	// Message is the gateway's message, for people.
	Message string
	// RequestID is the answer's X-Request-Id: quote it to support.
	RequestID string
	// RetryAfter is the answer's Retry-After (429, 503); 0 without one.
	RetryAfter time.Duration
	// IdempotencyKey is the key the request carried (given or generated):
	// send the same request again with it to learn the outcome without a
	// second effect. "" for a request without one.
	IdempotencyKey string
	// Attempts is how many times the request was sent.
	Attempts int
	// Err is the underlying error when there was no usable answer: the
	// connection failed, the context ended, or the body was not an
	// envelope.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.Status == 0 && errors.Is(e.Err, errNotSent):
		fmt.Fprintf(&b, "not sent: %v", e.Err)
	case e.Status == 0:
		fmt.Fprintf(&b, "no answer: %v", e.Err)
	case e.Code == 0:
		fmt.Fprintf(&b, "HTTP %d: %v", e.Status, e.Err)
	default:
		fmt.Fprintf(&b, "HTTP %d, code %d: %s", e.Status, int(e.Code), e.Message)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " [request %s]", e.RequestID)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches a Code: errors.Is(err, client.CodeCardFrozen).
func (e *Error) Is(target error) bool {
	c, ok := target.(Code)
	return ok && c == e.Code
}

// Business reports a business failure: HTTP 200 with a code other than
// 200. The request reached the business layer; under an Idempotency-Key
// the failure is stored like a success and a retry gets it again.
func (e *Error) Business() bool {
	return e.Status == http.StatusOK && e.Code != CodeOK && e.Code != 0
}

// Temporary reports a failure after which the same request, with the same
// Idempotency-Key (or message id), may succeed: no answer, 429, 503, and
// 1009 (a twin still running). Everything else is final.
func (e *Error) Temporary() bool {
	switch {
	case e.Status == 0:
		return !errors.Is(e.Err, errContext) && !errors.Is(e.Err, errNotSent) && !isTLSVerification(e.Err)
	case e.Status == http.StatusTooManyRequests, e.Status == http.StatusServiceUnavailable:
		return true
	case e.Status == http.StatusOK && e.Code == CodeInProgress:
		return true
	}
	return false
}

// errContext marks an attempt that ended because the caller's context did;
// errNotSent a request that could not be built (nothing went out, and the
// same request would fail the same way).
var (
	errContext = errors.New("client: the context ended")
	errNotSent = errors.New("client: the request was not sent")
)

// fieldRe is the start of a 400's message that names a field, header or
// parameter: "amount", "beneficiary.account_no", "cardNos[3]",
// "Idempotency-Key", or a list "amount, currency, direction".
var fieldRe = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_.\[\]-]*(, [A-Za-z][A-Za-z0-9_.\[\]-]*)*): `)

// fieldOf is the field a 400 message names, "" when it names none.
func fieldOf(status int, message string) string {
	if status != http.StatusBadRequest {
		return ""
	}
	if m := fieldRe.FindStringSubmatch(message); m != nil {
		return m[1]
	}
	return ""
}
