package merchant

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// Sealer encrypts secrets at rest with AES-256-GCM: merchant signing keys and
// card numbers. A sealed value is nonce ‖ ciphertext ‖ tag; the additional
// data binds it to where it belongs (for instance "pan:<card token>"), so a
// sealed value copied into another row does not open.
type Sealer struct {
	aead   cipher.AEAD
	macKey []byte
}

// DataKeyBytes is the length of a data key.
const DataKeyBytes = 32

// NewSealer makes a Sealer from a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != DataKeyBytes {
		return nil, fmt.Errorf("merchant: the data key must be %d bytes, not %d", DataKeyBytes, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	// A separate key for fingerprints, derived so that one secret (the data
	// key) is all an operator backs up.
	m := hmac.New(sha256.New, key)
	m.Write([]byte("gateway/fingerprint-key/v1"))
	return &Sealer{aead: aead, macKey: m.Sum(nil)}, nil
}

// Seal encrypts plaintext bound to context.
func (s *Sealer) Seal(plaintext []byte, context string) []byte {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plaintext)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return s.aead.Seal(nonce, nonce, plaintext, []byte(context))
}

// MAC returns HMAC-SHA256 of data under the fingerprint key: a stable,
// keyed fingerprint that finds duplicates of a secret without storing it.
func (s *Sealer) MAC(data []byte) []byte {
	m := hmac.New(sha256.New, s.macKey)
	m.Write(data)
	return m.Sum(nil)
}

// Open decrypts a sealed value bound to context.
func (s *Sealer) Open(sealed []byte, context string) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n+s.aead.Overhead() {
		return nil, errors.New("merchant: sealed value too short")
	}
	return s.aead.Open(nil, sealed[:n], sealed[n:], []byte(context))
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
