// Package seal is audit's signing and its Merkle tree: what makes a
// checkpoint or a period close a statement an auditor can check outside
// the database (docs/audit.md). It is pure (no database, no module
// import), so that an auditor's own verifier can use it alone; audit
// re-exports what its callers use.
package seal

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
)

// Signer signs the statements an auditor keeps outside the database: the
// checkpoints (audit's checkpoint.go) and the period closes (its close.go, issue 30
// point 4). It is the one home of signing: each kind of statement passes its own
// purpose, which is signed in front of the statement, so that a signature
// made for one kind can never be read as another. The private key lives in
// a file the operator keeps (docs/operations.md); the database never holds
// it.
type Signer struct {
	key ed25519.PrivateKey
	id  string
}

// The purposes signed in front of each statement, one per kind.
const (
	PurposeCheckpoint  = "paygate/checkpoint/v1"
	PurposePeriodClose = "paygate/period-close/v1" // audit's close.go
)

// KeyID names a public key: the first 16 hex digits of SHA-256 over its 32
// bytes. It tells an auditor which key to check with; it proves nothing.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// NewSigner returns a Signer with key.
func NewSigner(key ed25519.PrivateKey) *Signer {
	return &Signer{key: key, id: KeyID(key.Public().(ed25519.PublicKey))}
}

// KeyID is the signer's key id.
func (s *Signer) KeyID() string { return s.id }

// Public is the signer's public key.
func (s *Signer) Public() ed25519.PublicKey { return s.key.Public().(ed25519.PublicKey) }

// SignedMessage is what is signed for a statement of purpose: the purpose,
// a newline, the statement.
func SignedMessage(purpose string, statement []byte) []byte {
	msg := make([]byte, 0, len(purpose)+1+len(statement))
	return append(append(append(msg, purpose...), '\n'), statement...)
}

// Sign signs statement for purpose.
func (s *Signer) Sign(purpose string, statement []byte) []byte {
	return ed25519.Sign(s.key, SignedMessage(purpose, statement))
}

// VerifySignature reports whether sig is pub's signature of statement for
// purpose.
func VerifySignature(pub ed25519.PublicKey, purpose string, statement, sig []byte) bool {
	return len(pub) == ed25519.PublicKeySize && ed25519.Verify(pub, SignedMessage(purpose, statement), sig)
}

// GenerateKey makes a key pair as PEM: the private key in PKCS #8, the
// public key in PKIX (SubjectPublicKeyInfo), the formats openssl reads.
func GenerateKey() (private, public []byte, err error) {
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), nil
}

// LoadSigner reads a private key file GenerateKey wrote. The file must not
// be readable by others: it is what makes a checkpoint believable.
func LoadSigner(path string) (*Signer, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("the checkpoint key %s may be read by others (mode %o): chmod 600 it", path, st.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("%s: not a PEM PRIVATE KEY", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	key, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: not an Ed25519 key", path)
	}
	return NewSigner(key), nil
}

// ParsePublicKey reads a PEM PUBLIC KEY (PKIX) of Ed25519.
func ParsePublicKey(b []byte) (ed25519.PublicKey, error) {
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, errors.New("not a PEM PUBLIC KEY")
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, errors.New("not an Ed25519 public key")
	}
	return pub, nil
}
