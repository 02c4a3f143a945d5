package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/postings"
)

// envelope is the spec's Response<T> (section 2.1): every answer of the
// gateway, success or failure, HTTP 200 or not, has this shape.
type envelope struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data"`
}

// Business codes (docs/errors.md). 200 is success; every other code of an
// HTTP 200 answer is a business failure. HTTP failures (400, 401, …) repeat
// their HTTP status as the code. 1100-1199 are kept for remittances.
const (
	codeOK               = 200
	codeFailure          = 999
	codeInsufficient     = 1001
	codeCardNotFound     = 1002
	codeCardFrozen       = 1003
	codeCardCancelled    = 1004
	codeCurrencyDenied   = 1005
	codeBINDenied        = 1006
	codeLimitExceeded    = 1007
	codeIdemConflict     = 1008
	codeIdemInProgress   = 1009
	codeFXUnavailable    = 1010
	codeRemitNotFound    = 1101
	codeEventNotFound    = 1301 // webhooks and keys: 1300-1399
	codeEndpointNotFound = 1302
	codeAuthNotFound     = 1201 // internal network API: 1200-1299
	codeAuthClosed       = 1202
	messageOK            = "success"
	messageInternal      = "internal error"
	messageUnauthorized  = "unknown shop number or wrong public key"
	messageUnavailable   = "service unavailable; retry later with the same Idempotency-Key"
	messageTimeout       = "request timed out; retry with the same Idempotency-Key"
	messageBadToken      = "missing or wrong bearer token"
)

// Reasons the API itself gives to the errors it makes, so that they go
// through the one table below like the ledger's.
const (
	reasonRoute            postings.Reason = "route"
	reasonMethod           postings.Reason = "method"
	reasonBodyTooLarge     postings.Reason = "body_too_large"
	reasonMerchantDisabled postings.Reason = "merchant_disabled"
	reasonIPNotAllowed     postings.Reason = "ip_not_allowed"
	reasonTimeout          postings.Reason = "timeout"
	reasonBodyTimeout      postings.Reason = "body_timeout"
	reasonHeadersTooLarge  postings.Reason = "headers_too_large"
)

// outcome is how an error is answered: the HTTP status and the envelope
// code. A fixed message replaces the error's own, for the answers that must
// not tell anything (401, 5xx).
type outcome struct {
	status  int
	code    int
	message string
}

type reasonKey struct {
	code   postings.Code
	reason postings.Reason
}

// errorReasons maps (code, reason) pairs first; an empty code matches any
// code with that reason.
var errorReasons = map[reasonKey]outcome{
	{postings.ENOTFOUND, reasonRoute}:                        {http.StatusNotFound, http.StatusNotFound, ""},
	{postings.EINVALID, reasonMethod}:                        {http.StatusMethodNotAllowed, http.StatusMethodNotAllowed, ""},
	{postings.EINVALID, reasonBodyTooLarge}:                  {http.StatusRequestEntityTooLarge, http.StatusRequestEntityTooLarge, ""},
	{postings.EINVALID, reasonBodyTimeout}:                   {http.StatusRequestTimeout, http.StatusRequestTimeout, ""},
	{postings.EINVALID, reasonHeadersTooLarge}:               {http.StatusRequestHeaderFieldsTooLarge, http.StatusRequestHeaderFieldsTooLarge, ""},
	{postings.ELIMIT, reasonRateLimited}:                     {http.StatusTooManyRequests, http.StatusTooManyRequests, ""},
	{postings.EFORBIDDEN, reasonMerchantDisabled}:            {http.StatusForbidden, http.StatusForbidden, ""},
	{postings.EFORBIDDEN, reasonIPNotAllowed}:                {http.StatusForbidden, http.StatusForbidden, ""},
	{postings.EUNAVAILABLE, reasonTimeout}:                   {http.StatusServiceUnavailable, http.StatusServiceUnavailable, messageTimeout},
	{postings.ENOTFOUND, postings.ReasonCard}:                {http.StatusOK, codeCardNotFound, ""},
	{postings.ESTATE, postings.ReasonCardFrozen}:             {http.StatusOK, codeCardFrozen, ""},
	{postings.ESTATE, postings.ReasonCardCancelled}:          {http.StatusOK, codeCardCancelled, ""},
	{postings.EFORBIDDEN, postings.ReasonCurrency}:           {http.StatusOK, codeCurrencyDenied, ""},
	{postings.EFORBIDDEN, postings.ReasonBIN}:                {http.StatusOK, codeBINDenied, ""},
	{postings.ECONFLICT, postings.ReasonIdempotencyMismatch}: {http.StatusOK, codeIdemConflict, ""},
	{postings.ECONFLICT, postings.ReasonIdempotencyRace}:     {http.StatusOK, codeIdemInProgress, ""},
	{postings.ECONFLICT, postings.ReasonMessageID}:           {http.StatusOK, codeIdemConflict, ""},
	{postings.EFORBIDDEN, postings.ReasonFXPair}:             {http.StatusOK, codeFXUnavailable, ""},
	{"", postings.ReasonFXRateStale}:                         {http.StatusOK, codeFXUnavailable, ""},
	{postings.ENOTFOUND, postings.ReasonRemittance}:          {http.StatusOK, codeRemitNotFound, ""},
	{postings.ENOTFOUND, postings.ReasonEvent}:               {http.StatusOK, codeEventNotFound, ""},
	{postings.ENOTFOUND, postings.ReasonWebhookEndpoint}:     {http.StatusOK, codeEndpointNotFound, ""},
	// The internal network API (docs/network.md).
	{postings.EUNAUTHENTICATED, reasonInternalToken}:      {http.StatusUnauthorized, http.StatusUnauthorized, messageBadToken},
	{postings.ENOTFOUND, postings.ReasonAuthorization}:    {http.StatusOK, codeAuthNotFound, ""},
	{postings.ESTATE, postings.ReasonAuthorizationClosed}: {http.StatusOK, codeAuthClosed, ""},
}

// errorCodes maps the codes whose reason did not match above.
var errorCodes = map[postings.Code]outcome{
	postings.EINVALID:         {http.StatusBadRequest, http.StatusBadRequest, ""},
	postings.EUNAUTHENTICATED: {http.StatusUnauthorized, http.StatusUnauthorized, messageUnauthorized},
	postings.EUNAVAILABLE:     {http.StatusServiceUnavailable, http.StatusServiceUnavailable, messageUnavailable},
	postings.EINTERNAL:        {http.StatusInternalServerError, http.StatusInternalServerError, messageInternal},
	postings.EINSUFFICIENT:    {http.StatusOK, codeInsufficient, ""},
	postings.ELIMIT:           {http.StatusOK, codeLimitExceeded, ""},
	postings.EINPROGRESS:      {http.StatusOK, codeIdemInProgress, ""},
	postings.ENOTFOUND:        {http.StatusOK, codeFailure, ""},
	postings.ECONFLICT:        {http.StatusOK, codeFailure, ""},
	postings.EFORBIDDEN:       {http.StatusOK, codeFailure, ""},
	postings.ESTATE:           {http.StatusOK, codeFailure, ""},
}

// businessMessages are the messages of the codes when the error has none.
var businessMessages = map[int]string{
	codeFailure:          "the operation failed",
	codeInsufficient:     "insufficient funds",
	codeCardNotFound:     "card not found",
	codeCardFrozen:       "card is frozen",
	codeCardCancelled:    "card is cancelled",
	codeCurrencyDenied:   "currency not allowed",
	codeBINDenied:        "BIN not open to the merchant",
	codeLimitExceeded:    "limit exceeded",
	codeIdemConflict:     "Idempotency-Key reused with another request",
	codeIdemInProgress:   "a request with this Idempotency-Key is in progress",
	codeFXUnavailable:    "FX rate unavailable",
	codeAuthNotFound:     "authorization not found",
	codeAuthClosed:       "the authorization is closed",
	codeRemitNotFound:    "remittance not found",
	codeEventNotFound:    "event not found",
	codeEndpointNotFound: "webhook endpoint not found",
}

// classify turns any error into the *postings.Error that is answered and its
// outcome. Context errors are the request's deadline (or the client leaving):
// they are answered as a time-out.
func classify(err error) (*postings.Error, outcome) {
	var e *postings.Error
	switch {
	case errors.As(err, &e):
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		e = &postings.Error{Code: postings.EUNAVAILABLE, Reason: reasonTimeout, Message: messageTimeout}
	default:
		e = &postings.Error{Code: postings.EINTERNAL, Message: messageInternal}
	}
	if o, ok := errorReasons[reasonKey{e.Code, e.Reason}]; ok && e.Reason != "" {
		return e, o
	}
	if o, ok := errorReasons[reasonKey{"", e.Reason}]; ok && e.Reason != "" {
		return e, o
	}
	if o, ok := errorCodes[e.Code]; ok {
		return e, o
	}
	// A code this table does not know is a business failure of some kind.
	return e, outcome{status: http.StatusOK, code: codeFailure}
}

// errorMessage is the text of the envelope: the fixed message of the
// outcome, else the error's (with its field first), else the code's.
func errorMessage(e *postings.Error, o outcome) string {
	switch {
	case o.message != "":
		return o.message
	case e.Message != "" && e.Field != "":
		return e.Field + ": " + e.Message
	case e.Message != "":
		return e.Message
	case businessMessages[o.code] != "":
		return businessMessages[o.code]
	}
	return http.StatusText(o.status)
}

// writeError answers err in the envelope. Internal errors are logged here,
// once, with the request id; their details are never shown.
func writeError(c *gin.Context, err error) {
	if ctxErr := c.Request.Context().Err(); ctxErr != nil {
		// Past the deadline, an outage or an internal error is the deadline's
		// doing (the ledger reports a cancelled query as EUNAVAILABLE).
		switch postings.ErrorCode(err) {
		case postings.EUNAVAILABLE, postings.EINTERNAL:
			err = fmt.Errorf("%w (%v)", ctxErr, err)
		}
	}
	e, o := classify(err)
	if o.status == http.StatusInternalServerError {
		logger(c).Error("internal error", "error", err.Error())
	}
	if e.Code == postings.EUNAVAILABLE {
		logger(c).Warn("unavailable", "error", err.Error(), "reason", e.Reason)
		// For gateway_*_unavailable_total: an unknown outcome is counted
		// apart from the other 503s (docs/operations.md, "Metrics").
		c.Set(unavailableKey, string(e.Reason))
	}
	if o.status == http.StatusRequestTimeout {
		// The rest of the body may still come, or never: the connection
		// cannot carry another request.
		c.Header("Connection", "close")
	}
	setOutcome(c, o.code)
	writeEnvelope(c, o.status, envelope{Code: o.code, Message: errorMessage(e, o)})
}

// writeOK answers success with data.
func writeOK(c *gin.Context, data any) {
	setOutcome(c, codeOK)
	writeEnvelope(c, http.StatusOK, envelope{Code: codeOK, Message: messageOK, Data: data})
}

// writeResult ends a handler that calls one domain method: its error in the
// envelope, or else its result in the shape view gives it (api/views).
func writeResult[T, V any](c *gin.Context, view func(T) V, result T, err error) {
	if err != nil {
		writeError(c, err)
		return
	}
	writeOK(c, view(result))
}

// writeEnvelope encodes without gin's HTML escaping and aborts the chain. A
// value that cannot be encoded (a Money without its currency) is a bug:
// logged, and answered as an internal error.
func writeEnvelope(c *gin.Context, status int, env envelope) {
	env.Data = echoVersion(c, env.Data)
	b, err := json.Marshal(env)
	if err != nil {
		logger(c).Error("internal error", "error", "encoding the answer: "+err.Error())
		status = http.StatusInternalServerError
		setOutcome(c, http.StatusInternalServerError)
		b, _ = json.Marshal(envelope{Code: http.StatusInternalServerError, Message: messageInternal})
	}
	c.Abort()
	if c.Writer.Written() {
		return // a late write (after a panic mid-answer) cannot change anything
	}
	if status == http.StatusServiceUnavailable {
		// Every 503 — the database unreachable, a lock or statement
		// time-out, contention, the request's own deadline — did nothing
		// and may be retried with the same key: say when (RFC 9110 10.2.3).
		c.Header("Retry-After", strconv.Itoa(unavailableRetryAfterSeconds))
	}
	if idem := idempotencyOf(c); idem != nil && idem.Replayed {
		// The stored answer of an earlier request with this key (Stripe's
		// Idempotent-Replayed): nothing new happened.
		c.Header("Idempotent-Replayed", "true")
	}
	c.Data(status, "application/json; charset=utf-8", append(b, '\n'))
}

// unavailableRetryAfterSeconds is the Retry-After of a 503: long enough
// for a lock holder or a restarting database to move on, short enough not
// to hold a payment back (docs/errors.md).
const unavailableRetryAfterSeconds = 2

// outcomeKey holds the envelope code in the gin context, for logs and metrics.
const outcomeKey = "api.code"

// unavailableKey holds the reason of an EUNAVAILABLE answer, for metrics.
const unavailableKey = "api.unavailable"

func setOutcome(c *gin.Context, code int) { c.Set(outcomeKey, code) }
