package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
)

// tokenBytes is a session token's randomness: 256 bits.
const tokenBytes = 32

// NewToken is a fresh session token (base64url of 32 random bytes).
func NewToken() (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// TokenHash is what the database keeps of a token: its SHA-256, so that a
// copy of the sessions table signs nobody in.
func TokenHash(tok string) []byte {
	h := sha256.Sum256([]byte(tok))
	return h[:]
}

// CSRFToken is the session's CSRF token: an HMAC of a fixed label under the
// session token. It is per session, needs no storage, and cannot be made
// without the cookie, which scripts cannot read (HttpOnly) and other sites
// do not send (SameSite=Strict).
func CSRFToken(sessionTok string) string {
	m := hmac.New(sha256.New, []byte(sessionTok))
	m.Write([]byte("gateway console csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// SameToken compares two tokens in constant time; empty never matches.
func SameToken(a, b string) bool {
	return a != "" && b != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
