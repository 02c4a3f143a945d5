package signature

// Standard Webhooks v1 (https://www.standardwebhooks.com), sent on every
// callback BESIDE the spec's X-Sign scheme (docs/callbacks.md, "Standard
// Webhooks"), so that a receiver can verify with an off-the-shelf library
// (standardwebhooks, svix) in any language instead of hand-rolling the
// spec's digest:
//
//	webhook-id:        the event id (the same on every retry and replay)
//	webhook-timestamp: unix seconds of the attempt (equal to X-Timestamp)
//	webhook-signature: v1,<base64 HMAC-SHA256(secret, id "." timestamp "." body)>
//
// The secret is "whsec_" and the standard base64 of random bytes; the HMAC
// key is the decoded bytes. During a roll of the secret the header carries
// one signature per secret in force, space-separated, as the standard
// defines; a verifier accepts the callback when any of them matches.

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The Standard Webhooks headers (lowercase, as the standard writes them;
// HTTP header names are case-insensitive).
const (
	HeaderWebhookID        = "webhook-id"
	HeaderWebhookTimestamp = "webhook-timestamp"
	HeaderWebhookSignature = "webhook-signature"
)

// SecretPrefix starts every webhook secret.
const SecretPrefix = "whsec_"

// Bounds of a webhook secret's decoded bytes: the standard asks for 24 to
// 64; the gateway makes 32.
const (
	secretBytesMin = 24
	secretBytesMax = 64
	secretBytesNew = 32
	// webhookIDBytesMax bounds webhook-id on the verifying side.
	webhookIDBytesMax = 256
)

// The errors of VerifyStandard, beside ErrStaleTimestamp and
// ErrBadSignature (which it shares with Verify).
var (
	// ErrMissingStandardHeaders: webhook-id, webhook-timestamp or
	// webhook-signature is missing or empty.
	ErrMissingStandardHeaders = errors.New("signature: missing webhook-id, webhook-timestamp or webhook-signature")
	// ErrBadSecret: a secret is not whsec_ and the base64 of 24 to 64 bytes.
	ErrBadSecret = errors.New("signature: a webhook secret must be whsec_ and the base64 of 24 to 64 bytes")
)

// NewSecret returns a new random webhook secret (whsec_ and 32 bytes).
func NewSecret() (string, error) {
	b := make([]byte, secretBytesNew)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("signature: no randomness for a webhook secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// secretKey decodes a secret into its HMAC key. The whsec_ prefix is
// required: it is what tells a webhook secret from the spec's sk_ key.
func secretKey(secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, ErrBadSecret
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(key) < secretBytesMin || len(key) > secretBytesMax {
		return nil, ErrBadSecret
	}
	return key, nil
}

// CheckSecret refuses what is not a webhook secret.
func CheckSecret(secret string) error {
	_, err := secretKey(secret)
	return err
}

func standardMAC(key []byte, id, timestamp string, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// SignStandard returns one entry of webhook-signature: "v1," and the
// base64 HMAC-SHA256 of id.timestamp.body under the secret's key.
func SignStandard(id, timestamp string, body []byte, secret string) (string, error) {
	key, err := secretKey(secret)
	if err != nil {
		return "", err
	}
	return "v1," + base64.StdEncoding.EncodeToString(standardMAC(key, id, timestamp, body)), nil
}

// SetStandardHeaders signs an attempt of a callback the Standard Webhooks
// way: webhook-id, webhook-timestamp and webhook-signature with one
// signature per secret, space-separated, in the order given. It refuses no
// secret, more than SignaturesMax, a malformed one or an empty id, and then
// sets nothing.
func SetStandardHeaders(h http.Header, id, timestamp string, body []byte, secrets ...string) error {
	if id == "" || len(secrets) == 0 || len(secrets) > SignaturesMax {
		return fmt.Errorf("signature: an id and 1 to %d webhook secrets are needed", SignaturesMax)
	}
	sigs := make([]string, len(secrets))
	for i, s := range secrets {
		sig, err := SignStandard(id, timestamp, body, s)
		if err != nil {
			return err
		}
		sigs[i] = sig
	}
	h.Set(HeaderWebhookID, id)
	h.Set(HeaderWebhookTimestamp, timestamp)
	h.Set(HeaderWebhookSignature, strings.Join(sigs, " "))
	return nil
}

// VerifyStandard checks a Standard Webhooks callback against any of
// secrets: the three headers present, the timestamp unix seconds within
// ±tolerance of now (DefaultTolerance when ≤ 0), and one "v1," entry of
// signatures equal to the HMAC under one of the secrets. Entries of
// another version are ignored, as the standard says; every pair is compared
// in constant time, without stopping at the first match.
func VerifyStandard(body []byte, id, timestamp, signatures string, secrets []string, now time.Time, tolerance time.Duration) error {
	if id == "" || timestamp == "" || signatures == "" {
		return ErrMissingStandardHeaders
	}
	if len(id) > webhookIDBytesMax {
		return fmt.Errorf("%w: webhook-id is longer than %d bytes", ErrBadSignature, webhookIDBytesMax)
	}
	if err := checkFresh(timestamp, now, tolerance); err != nil {
		return err
	}
	if len(secrets) == 0 || len(secrets) > KeysMax {
		return fmt.Errorf("%w: 1 to %d secrets are needed", ErrBadSignature, KeysMax)
	}
	entries := strings.Fields(signatures)
	if len(entries) > SignaturesMax {
		return fmt.Errorf("%w: more than %d signatures", ErrBadSignature, SignaturesMax)
	}
	var given [][]byte
	for _, e := range entries {
		b64, ok := strings.CutPrefix(e, "v1,")
		if !ok {
			continue // another version: not ours to judge
		}
		sum, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(sum) != sha256.Size {
			return fmt.Errorf("%w: a v1 signature is not the base64 of %d bytes", ErrBadSignature, sha256.Size)
		}
		given = append(given, sum)
	}
	match := 0
	for _, s := range secrets {
		key, err := secretKey(s)
		if err != nil {
			continue // a malformed secret never verifies
		}
		want := standardMAC(key, id, timestamp, body)
		for _, g := range given {
			match |= subtle.ConstantTimeCompare(g, want)
		}
	}
	if match != 1 {
		return ErrBadSignature
	}
	return nil
}
