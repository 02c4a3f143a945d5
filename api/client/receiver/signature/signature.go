// Package signature is the one definition of how the gateway signs its
// callbacks (docs/callbacks.md; merchant-gateway-service.md section 6):
// the gateway's sender (internal/delivery) signs with it and the reference
// receiver (package receiver, which merchants import) verifies with it, so
// the two cannot drift. It uses only the standard library, so that a
// merchant can copy it.
//
// Every callback is a POST with a JSON body and these headers:
//
//	X-Timestamp:  the time of the attempt, in unix seconds
//	X-Sign:       hex(SHA-256(raw body ‖ X-Timestamp ‖ private key))
//	X-Signatures: the same, once per signing key in force, space-separated
//
// SetHeaders is the sender's side: it writes all three. Sign computes one
// signature; Verify checks X-Sign in constant time and refuses a stale
// timestamp; VerifyKeys accepts a callback that any of the receiver's keys
// signed.
//
// During a roll of the signing key (docs/callbacks.md, "Rolling the signing
// key") the gateway signs each callback with both keys: X-Sign with the
// older one, and X-Signatures lists every signature. A receiver given both
// keys (VerifyKeys) never rejects a genuine callback, whichever key the
// gateway puts in X-Sign.
//
// Verify over the raw bytes received. Never re-encode the JSON before
// verifying: key order and spacing are not part of the contract.
//
// The second scheme, Standard Webhooks v1 (webhook-id, webhook-timestamp,
// webhook-signature with a whsec_ secret), is in standard.go, beside this
// one: SetStandardHeaders, SignStandard, VerifyStandard.
package signature

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The callback headers.
const (
	HeaderSign      = "X-Sign"
	HeaderTimestamp = "X-Timestamp"
	// HeaderSignatures is the gateway's addition: one signature per signing
	// key in force, space-separated (one outside a roll).
	HeaderSignatures = "X-Signatures"
)

// Bounds of VerifyKeys: a callback carries at most this many signatures,
// and a receiver holds at most this many keys (the current one and the
// one it replaces are all a roll needs).
const (
	SignaturesMax = 4
	KeysMax       = 4
)

// DefaultTolerance is how far X-Timestamp may be from the receiver's clock,
// either way, when no tolerance is given.
const DefaultTolerance = 5 * time.Minute

// The errors of Verify. Handler answers ErrMissingHeaders with 400 and the
// other two with 401. Verify wraps them with the reason; test with errors.Is.
var (
	// ErrMissingHeaders: X-Sign or X-Timestamp is missing or empty.
	ErrMissingHeaders = errors.New("signature: missing X-Sign or X-Timestamp")
	// ErrStaleTimestamp: X-Timestamp is not unix seconds, or is further
	// from now than the tolerance.
	ErrStaleTimestamp = errors.New("signature: stale timestamp")
	// ErrBadSignature: X-Sign is not 64 hex digits, or does not match.
	ErrBadSignature = errors.New("signature: bad signature")
)

// timestampDigitsMax bounds X-Timestamp: unix seconds fit in 11 digits
// until the year 5138; 12 leaves room and keeps the parse far from
// overflow.
const timestampDigitsMax = 12

// SetHeaders signs an attempt of a callback: it sets X-Timestamp to
// timestamp, X-Sign to the signature with keys[0] and X-Signatures to the
// signature with each key, space-separated. keys are the signing keys in
// force, oldest first (during a roll the replaced key, then the new one),
// so that X-Sign stays what receivers already check. It refuses no key,
// more than SignaturesMax or an empty one, and then sets nothing.
func SetHeaders(h http.Header, body []byte, timestamp string, keys ...string) error {
	if len(keys) == 0 || len(keys) > SignaturesMax || slices.Contains(keys, "") {
		return fmt.Errorf("signature: 1 to %d non-empty keys are needed", SignaturesMax)
	}
	sigs := make([]string, len(keys))
	for i, k := range keys {
		sigs[i] = Sign(body, timestamp, k)
	}
	h.Set(HeaderTimestamp, timestamp)
	h.Set(HeaderSign, sigs[0])
	h.Set(HeaderSignatures, strings.Join(sigs, " "))
	return nil
}

// Sign returns X-Sign for a body and timestamp: the lowercase hex SHA-256 of
// the raw body, then the timestamp, then the merchant's private key, with
// nothing in between.
func Sign(body []byte, timestamp string, privateKey string) string {
	sum := digest(body, timestamp, privateKey)
	return hex.EncodeToString(sum[:])
}

func digest(body []byte, timestamp, privateKey string) [sha256.Size]byte {
	h := sha256.New()
	h.Write(body)
	h.Write([]byte(timestamp))
	h.Write([]byte(privateKey))
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// ParseTimestamp reads X-Timestamp strictly: decimal unix seconds, digits
// only (no sign, space or leading zero), at most 12 of them. The strictness
// matters because the signed string has no separator between the body and
// the timestamp.
func ParseTimestamp(s string) (time.Time, error) {
	if s == "" || len(s) > timestampDigitsMax {
		return time.Time{}, fmt.Errorf("%w: X-Timestamp is not unix seconds", ErrStaleTimestamp)
	}
	if s[0] == '0' && len(s) > 1 {
		return time.Time{}, fmt.Errorf("%w: X-Timestamp is not unix seconds", ErrStaleTimestamp)
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return time.Time{}, fmt.Errorf("%w: X-Timestamp is not unix seconds", ErrStaleTimestamp)
		}
		n = n*10 + int64(c-'0')
	}
	return time.Unix(n, 0), nil
}

// Verify checks a callback: both headers present, timestamp within
// ±tolerance of now (DefaultTolerance when tolerance ≤ 0), and sign equal to
// Sign(body, timestamp, privateKey), compared in constant time. sign may be
// lowercase or uppercase hex. An empty privateKey never verifies.
func Verify(body []byte, timestamp, sign, privateKey string, now time.Time, tolerance time.Duration) error {
	if timestamp == "" || sign == "" {
		return ErrMissingHeaders
	}
	if err := checkFresh(timestamp, now, tolerance); err != nil {
		return err
	}
	if privateKey == "" {
		return fmt.Errorf("%w: no private key configured", ErrBadSignature)
	}
	var got [sha256.Size]byte
	if len(sign) != hex.EncodedLen(sha256.Size) {
		return fmt.Errorf("%w: X-Sign is not %d hex digits", ErrBadSignature, hex.EncodedLen(sha256.Size))
	}
	if _, err := hex.Decode(got[:], []byte(sign)); err != nil {
		return fmt.Errorf("%w: X-Sign is not hex", ErrBadSignature)
	}
	want := digest(body, timestamp, privateKey)
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		return ErrBadSignature
	}
	return nil
}

// checkFresh checks that timestamp is unix seconds within ±tolerance of now
// (DefaultTolerance when tolerance ≤ 0): Verify's and VerifyKeys' one
// rule for the time.
func checkFresh(timestamp string, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	ts, err := ParseTimestamp(timestamp)
	if err != nil {
		return err
	}
	if d := now.Sub(ts); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: X-Timestamp is %s from now, more than %s", ErrStaleTimestamp, d.Round(time.Second), tolerance)
	}
	return nil
}

// VerifyKeys checks a callback against any of keys: X-Sign and each entry of
// X-Signatures (signatures, space-separated; may be empty) are compared with
// the signature of each key, every pair in constant time and without
// stopping at the first match. The timestamp is checked as Verify does. It
// is what a receiver runs during a roll of the signing key, with the old
// and the new key.
func VerifyKeys(body []byte, timestamp, sign, signatures string, keys []string, now time.Time, tolerance time.Duration) error {
	if timestamp == "" || (sign == "" && signatures == "") {
		return ErrMissingHeaders
	}
	if err := checkFresh(timestamp, now, tolerance); err != nil {
		return err
	}
	if len(keys) == 0 || len(keys) > KeysMax {
		return fmt.Errorf("%w: 1 to %d keys are needed", ErrBadSignature, KeysMax)
	}
	given := strings.Fields(signatures)
	if sign != "" {
		given = append(given, sign)
	}
	if len(given) > SignaturesMax+1 {
		return fmt.Errorf("%w: more than %d signatures", ErrBadSignature, SignaturesMax)
	}
	sums := make([][sha256.Size]byte, 0, len(given))
	for _, g := range given {
		var got [sha256.Size]byte
		if len(g) != hex.EncodedLen(sha256.Size) {
			return fmt.Errorf("%w: a signature is not %d hex digits", ErrBadSignature, hex.EncodedLen(sha256.Size))
		}
		if _, err := hex.Decode(got[:], []byte(g)); err != nil {
			return fmt.Errorf("%w: a signature is not hex", ErrBadSignature)
		}
		sums = append(sums, got)
	}
	match := 0
	for _, k := range keys {
		if k == "" {
			continue // an empty key never verifies
		}
		want := digest(body, timestamp, k)
		for i := range sums {
			match |= subtle.ConstantTimeCompare(sums[i][:], want[:])
		}
	}
	if match != 1 {
		return ErrBadSignature
	}
	return nil
}
