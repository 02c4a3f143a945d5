package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1" // #nosec G505 -- RFC 6238's default, what every authenticator app computes
	"crypto/subtle"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// TOTP as RFC 6238 with the parameters every authenticator app defaults to:
// HMAC-SHA1, 30-second steps, 6 digits, one step of clock skew either way.
// A code is accepted once: the last step used is kept per user
// (console_users.totp_last_step), so a code seen over a shoulder cannot be
// replayed within its window. Written here (40 lines) rather than taken
// from a library, with RFC 6238's test vectors in totp_test.go.
const (
	totpStep    = 30 * time.Second
	totpDigits  = 6
	totpSkew    = 1
	totpSecretN = 20 // bytes: RFC 4226's recommended 160 bits
)

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewTOTPSecret returns a fresh secret in base32, as authenticator apps take it.
func NewTOTPSecret() (string, error) {
	k := make([]byte, totpSecretN)
	if _, err := rand.Read(k); err != nil {
		return "", err
	}
	return b32.EncodeToString(k), nil
}

// TOTPURI is the otpauth:// URI of a secret, for a QR code or an app's
// "enter key" screen.
func TOTPURI(login, secret string) string {
	v := url.Values{"secret": {secret}, "issuer": {"gateway console"}, "algorithm": {"SHA1"}, "digits": {"6"}, "period": {"30"}}
	return "otpauth://totp/" + url.PathEscape("gateway console:"+login) + "?" + v.Encode()
}

// TOTPCode is the code of secret (base32) at time t.
func TOTPCode(secret string, t time.Time) (string, error) {
	k, err := b32.DecodeString(strings.ToUpper(secret))
	if err != nil {
		return "", fmt.Errorf("console: the TOTP secret is not base32")
	}
	return hotp(k, t.Unix()/int64(totpStep/time.Second)), nil
}

func hotp(key []byte, step int64) string {
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(step)) // #nosec G115 -- steps since 1970 are positive
	m := hmac.New(sha1.New, key)
	m.Write(msg[:])
	sum := m.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	v := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	return fmt.Sprintf("%06d", v%1_000_000)
}

// CheckTOTP returns the step at which code is valid for key around now, or
// 0 when it is not. Every candidate is compared (in constant time), so the
// time taken does not say which step matched.
func CheckTOTP(key []byte, code string, now time.Time) int64 {
	if len(code) != totpDigits {
		return 0
	}
	cur := now.Unix() / int64(totpStep/time.Second)
	var found int64
	for d := int64(-totpSkew); d <= totpSkew; d++ {
		if subtle.ConstantTimeCompare([]byte(hotp(key, cur+d)), []byte(code)) == 1 {
			found = cur + d
		}
	}
	return found
}

// DecodeTOTPSecret is the key of a base32 secret as NewTOTPSecret gives it.
func DecodeTOTPSecret(secret string) ([]byte, error) { return b32.DecodeString(secret) }
