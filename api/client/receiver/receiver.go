// Package receiver is the reference receiver for the gateway's signed
// callbacks (docs/callbacks.md; merchant-gateway-service.md section 6). It
// uses only the standard library and its signature package, so that a
// merchant can copy it.
//
// The signature format is package signature's (api/receiver/signature),
// which the gateway signs with: X-Timestamp, X-Sign =
// hex(SHA-256(raw body ‖ X-Timestamp ‖ private key)), and X-Signatures
// during a roll of the signing key. This package re-exports its names so
// that a receiver needs one import, and adds Handler: a complete
// http.Handler that verifies, decodes the Event, de-duplicates on
// event_id, calls the merchant's function and answers {"code":200,...}.
//
// Verify over the raw bytes received. Never re-encode the JSON before
// verifying: key order and spacing are not part of the contract.
package receiver

import (
	"time"

	"github.com/paygate/gateway/api/client/receiver/signature"
)

// The callback headers (package signature).
const (
	HeaderSign       = signature.HeaderSign
	HeaderTimestamp  = signature.HeaderTimestamp
	HeaderSignatures = signature.HeaderSignatures

	// Standard Webhooks (docs/callbacks.md, "Standard Webhooks").
	HeaderWebhookID        = signature.HeaderWebhookID
	HeaderWebhookTimestamp = signature.HeaderWebhookTimestamp
	HeaderWebhookSignature = signature.HeaderWebhookSignature
)

// Bounds of VerifyKeys (package signature): signatures per callback, keys
// per receiver.
const (
	SignaturesMax = signature.SignaturesMax
	KeysMax       = signature.KeysMax
)

// DefaultTolerance is how far X-Timestamp may be from the receiver's clock,
// either way, when no tolerance is given.
const DefaultTolerance = signature.DefaultTolerance

// The errors of Verify, the same values as package signature's: test with
// errors.Is. Handler answers ErrMissingHeaders with 400 and the other two
// with 401.
var (
	ErrMissingHeaders = signature.ErrMissingHeaders
	ErrStaleTimestamp = signature.ErrStaleTimestamp
	ErrBadSignature   = signature.ErrBadSignature
)

// Sign returns X-Sign for a body and timestamp (signature.Sign).
func Sign(body []byte, timestamp string, privateKey string) string {
	return signature.Sign(body, timestamp, privateKey)
}

// ParseTimestamp reads X-Timestamp strictly (signature.ParseTimestamp).
func ParseTimestamp(s string) (time.Time, error) { return signature.ParseTimestamp(s) }

// Verify checks a callback's X-Sign (signature.Verify).
func Verify(body []byte, timestamp, sign, privateKey string, now time.Time, tolerance time.Duration) error {
	return signature.Verify(body, timestamp, sign, privateKey, now, tolerance)
}

// VerifyKeys checks a callback against any of keys (signature.VerifyKeys):
// what a receiver runs during a roll of the signing key.
func VerifyKeys(body []byte, timestamp, sign, signatures string, keys []string, now time.Time, tolerance time.Duration) error {
	return signature.VerifyKeys(body, timestamp, sign, signatures, keys, now, tolerance)
}

// VerifyStandard checks a callback's Standard Webhooks headers against any
// of the merchant's webhook secrets (signature.VerifyStandard).
func VerifyStandard(body []byte, id, timestamp, signatures string, secrets []string, now time.Time, tolerance time.Duration) error {
	return signature.VerifyStandard(body, id, timestamp, signatures, secrets, now, tolerance)
}
