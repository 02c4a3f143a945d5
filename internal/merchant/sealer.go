package merchant

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
)

// Sealer encrypts secrets at rest with AES-256-GCM: merchant signing keys,
// webhook secrets, console TOTP secrets and card numbers. The additional
// data binds a sealed value to where it belongs (for instance
// "pan:<card token>"), so a sealed value copied into another row does not
// open.
//
// Keys are versioned (docs/security.md, "The data key"). Version 0 is the
// data key itself (GATEWAY_DATA_KEY or data.key), which is never rotated in
// place: a value sealed under it is nonce ‖ ciphertext ‖ tag, the form every
// value had before versions existed. Versions 1 and up are random keys kept
// in the database (data_key_versions) wrapped under the data key; `gateway
// datakey rotate` adds one, and a value sealed under one carries it in a
// header: sealHeader ‖ version (2 bytes) ‖ nonce ‖ ciphertext ‖ tag. A
// value opens under the version it names, so the old versions stay readable
// until the re-seal has moved every row off them.
type Sealer struct {
	master cipher.AEAD // version 0
	macKey []byte
	fp     string

	mu      sync.RWMutex
	keys    map[uint16]cipher.AEAD // versions 1..; version 0 is master
	current uint16                 // the version Seal uses
	// load fetches a version this process has not seen (one a newer
	// process made with `datakey rotate`); nil: none can be fetched.
	load func(version uint16) ([]byte, error)
}

// DataKeyBytes is the length of a data key.
const DataKeyBytes = 32

// sealHeader starts a value sealed under a key version ≥ 1. Five bytes: a
// value of version 0 starts with a random nonce, which begins with these
// bytes once in 2^40; Open then still tries version 0 when the header's
// version does not open it.
var sealHeader = []byte{0, 'g', 'w', 'k', 'v'}

const headerLen = 5 + 2

// NewSealer makes a Sealer from a 32-byte data key, sealing under version 0
// (the key itself) until versions are loaded from the database (OpenKeyring).
func NewSealer(key []byte) (*Sealer, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	// A separate key for fingerprints, derived so that one secret (the data
	// key) is all an operator backs up. It does not change with the key
	// versions: PAN fingerprints stay comparable (cards_pan_fingerprint_key).
	m := hmac.New(sha256.New, key)
	m.Write([]byte("gateway/fingerprint-key/v1"))
	return &Sealer{master: aead, macKey: m.Sum(nil), fp: KeyFingerprint(key), keys: map[uint16]cipher.AEAD{}}, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != DataKeyBytes {
		return nil, fmt.Errorf("merchant: the data key must be %d bytes, not %d", DataKeyBytes, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// KeyFingerprint names a data key without revealing it: the first 16 bytes
// of HMAC-SHA256 under the key of a fixed label, in hex. The database
// records it (data_key_binding) so that a process started with another key
// is refused; it cannot be inverted to the key, nor computed without it.
func KeyFingerprint(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("gateway/data-key-fingerprint/v1"))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// Fingerprint is the fingerprint of this sealer's data key.
func (s *Sealer) Fingerprint() string { return s.fp }

// CurrentVersion is the key version Seal uses.
func (s *Sealer) CurrentVersion() uint16 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.current
}

// addVersion makes version v's key (unwrapped) available; current says
// whether Seal uses it from now on.
func (s *Sealer) addVersion(v uint16, key []byte, current bool) error {
	aead, err := newAEAD(key)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[v] = aead
	if current && v > s.current {
		s.current = v
	}
	return nil
}

// Seal encrypts plaintext bound to context under the current key version.
func (s *Sealer) Seal(plaintext []byte, context string) []byte {
	s.mu.RLock()
	v, aead := s.current, s.keys[s.current]
	s.mu.RUnlock()
	var out []byte
	if v == 0 {
		aead = s.master
	} else {
		out = binary.BigEndian.AppendUint16(append(make([]byte, 0, headerLen+aead.NonceSize()+len(plaintext)+aead.Overhead()), sealHeader...), v)
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	out = append(out, nonce...)
	return aead.Seal(out, nonce, plaintext, []byte(context))
}

// SealedVersion is the key version a sealed value names (0: none, the data
// key itself).
func SealedVersion(sealed []byte) uint16 {
	if len(sealed) >= headerLen && bytes.Equal(sealed[:len(sealHeader)], sealHeader) {
		return binary.BigEndian.Uint16(sealed[len(sealHeader):headerLen])
	}
	return 0
}

// MAC returns HMAC-SHA256 of data under the fingerprint key: a stable,
// keyed fingerprint that finds duplicates of a secret without storing it.
func (s *Sealer) MAC(data []byte) []byte {
	m := hmac.New(sha256.New, s.macKey)
	m.Write(data)
	return m.Sum(nil)
}

// Open decrypts a sealed value bound to context, under the key version it
// names.
func (s *Sealer) Open(sealed []byte, context string) ([]byte, error) {
	if v := SealedVersion(sealed); v != 0 {
		aead, err := s.version(v)
		if err == nil {
			if out, oerr := open(aead, sealed[headerLen:], context); oerr == nil {
				return out, nil
			}
		}
		// A version-0 value whose nonce began like a header (once in
		// 2^40) opens below; anything else reports the version's error.
		if out, oerr := open(s.master, sealed, context); oerr == nil {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		return nil, errors.New("merchant: sealed value does not open (key version " + fmt.Sprint(v) + ")")
	}
	return open(s.master, sealed, context)
}

func open(aead cipher.AEAD, sealed []byte, context string) ([]byte, error) {
	n := aead.NonceSize()
	if len(sealed) < n+aead.Overhead() {
		return nil, errors.New("merchant: sealed value too short")
	}
	return aead.Open(nil, sealed[:n], sealed[n:], []byte(context))
}

// version returns key version v, fetching it from the database when this
// process has not loaded it yet (a process started before `datakey rotate`
// meeting a value a newer one sealed).
func (s *Sealer) version(v uint16) (cipher.AEAD, error) {
	s.mu.RLock()
	aead, ok := s.keys[v]
	load := s.load
	s.mu.RUnlock()
	if ok {
		return aead, nil
	}
	if load == nil {
		return nil, fmt.Errorf("merchant: sealed under data key version %d, which this process does not hold", v)
	}
	key, err := load(v)
	if err != nil {
		return nil, err
	}
	if err := s.addVersion(v, key, false); err != nil {
		return nil, err
	}
	return s.version(v)
}

// signingKeyContext binds a merchant's sealed callback signing key to its
// shop: the one spelling of it, which CreateMerchant and a key roll seal
// with and the callback sender (internal/delivery) opens with.
func signingKeyContext(shopNo string) string { return "merchant-private-key:" + shopNo }

// SealSigningKey seals a merchant's callback signing key for its row.
func (s *Sealer) SealSigningKey(key, shopNo string) []byte {
	return s.Seal([]byte(key), signingKeyContext(shopNo))
}

// OpenSigningKey opens the sealed callback signing key of shopNo.
func (s *Sealer) OpenSigningKey(sealed []byte, shopNo string) ([]byte, error) {
	return s.Open(sealed, signingKeyContext(shopNo))
}
