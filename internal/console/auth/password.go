// Package auth is how the console checks who signs in: argon2id password
// hashes, RFC 6238 TOTP codes, session and CSRF tokens, and the tracker of
// a user's tries being checked at once (docs/console.md, "Passwords",
// "Lockout"). Pure: no table, no HTTP handler; the console's login and
// lockout (internal/console) use it with the store's counters.
package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/crypto/argon2"

	"github.com/paygate/gateway/postings"
)

// Passwords are stored as argon2id PHC strings,
// $argon2id$v=19$m=19456,t=2,p=1$<salt>$<key> (RawStdEncoding, 16-byte
// salt, 32-byte key). The parameters are OWASP's minimum for argon2id
// (m=19 MiB, t=2, p=1): about 35 ms a hash on the project's 2-core machine,
// where RFC 9106's second recommendation (m=64 MiB, t=3, p=4) took 155 ms
// and would let a burst of logins take the console's cores
// (docs/console.md, "Passwords").
const (
	argonTime       = 2
	argonMemoryKiB  = 19 * 1024
	argonThreads    = 1
	argonSaltBytes  = 16
	argonKeyBytes   = 32
	passwordLenMin  = 12
	PasswordLenMax  = 128 // bytes; longer input is refused before it is hashed
	argonMemoryMax  = 256 * 1024
	argonTimeMax    = 10
	argonThreadsMax = 8
)

// CheckPasswordRules refuses a password a user may not choose: shorter
// than 12 or longer than 128 bytes, or with control characters.
func CheckPasswordRules(pw string) error {
	if len(pw) < passwordLenMin || len(pw) > PasswordLenMax {
		return postings.FieldErrorf("password", "must be %d to %d bytes", passwordLenMin, PasswordLenMax)
	}
	for _, r := range pw {
		if r < 0x20 || r == 0x7f {
			return postings.FieldErrorf("password", "must not contain control characters")
		}
	}
	return nil
}

// hashParams are the parameters new hashes get. Only tests change them
// (UseCheapHashes): under the race detector one hash at the real
// parameters takes seconds, and the browser tests make dozens.
type hashParams struct {
	time, memoryKiB uint32
	threads         uint8
}

var newHashParams = hashParams{argonTime, argonMemoryKiB, argonThreads}

// UseCheapHashes makes new password hashes cheap (m = 64 KiB, t = 1) for
// the tests that make many users and logins; the hashes still go through
// the same code and parameters-from-the-hash check. It returns the
// function that restores the real parameters. For tests only.
func UseCheapHashes() (restore func()) {
	old := newHashParams
	newHashParams = hashParams{time: 1, memoryKiB: 64, threads: 1}
	return func() { newHashParams = old }
}

// HashPassword returns the PHC string of pw with a fresh salt.
func HashPassword(pw string) (string, error) {
	salt := make([]byte, argonSaltBytes)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	p := newHashParams
	key := argon2.IDKey([]byte(pw), salt, p.time, p.memoryKiB, p.threads, argonKeyBytes)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.memoryKiB, p.time, p.threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// CheckPassword reports whether pw matches the PHC string, comparing in
// constant time. The parameters are read from the string (so that they can
// be raised later without invalidating old hashes) but bounded, so that a
// row edited in the database cannot make a login allocate gigabytes.
func CheckPassword(phc, pw string) bool {
	if len(pw) > PasswordLenMax {
		return false
	}
	parts := strings.Split(phc, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return false
	}
	var m, t uint32
	var p uint8
	if n, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); n != 3 || err != nil {
		return false
	}
	if m == 0 || m > argonMemoryMax || t == 0 || t > argonTimeMax || p == 0 || p > argonThreadsMax {
		return false
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	want, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 || len(want) > 64 {
		return false
	}
	hashChecks.Add(1)
	got := argon2.IDKey([]byte(pw), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// hashChecks counts the argon2 computations CheckPassword makes: a test
// of the login's equal cost counts them (one per try whatever the user's
// state), where timing would depend on a quiet machine.
var hashChecks atomic.Int64

// HashChecks is the number of argon2 computations of password checks so
// far (a test of equal cost counts them rather than timing them).
func HashChecks() int64 { return hashChecks.Load() }

// DummyHash is checked against when the login is unknown, so that an
// unknown login costs what a known one does and timing does not tell which
// logins exist.
var DummyHash = sync.OnceValue(func() string {
	h, err := HashPassword("not a password of anyone")
	if err != nil {
		panic(err)
	}
	return h
})
