package audit

import (
	"crypto/ed25519"

	"github.com/paygate/gateway/internal/audit/seal"
)

// The signing of checkpoints and period closes is internal/audit/seal's
// (pure, so an auditor's own verifier can use it alone); these are its
// names as audit's callers have always used them.

// Signer signs the statements an auditor keeps outside the database
// (seal.Signer).
type Signer = seal.Signer

// The purposes signed in front of each statement, one per kind.
const (
	PurposeCheckpoint  = seal.PurposeCheckpoint
	PurposePeriodClose = seal.PurposePeriodClose
)

// KeyID names a public key (seal.KeyID).
func KeyID(pub ed25519.PublicKey) string { return seal.KeyID(pub) }

// NewSigner returns a Signer with key.
func NewSigner(key ed25519.PrivateKey) *Signer { return seal.NewSigner(key) }

// VerifySignature reports whether sig is pub's signature of statement for
// purpose.
func VerifySignature(pub ed25519.PublicKey, purpose string, statement, sig []byte) bool {
	return seal.VerifySignature(pub, purpose, statement, sig)
}

// GenerateKey makes a key pair as PEM (seal.GenerateKey).
func GenerateKey() (private, public []byte, err error) { return seal.GenerateKey() }

// LoadSigner reads a private key file GenerateKey wrote (seal.LoadSigner).
func LoadSigner(path string) (*Signer, error) { return seal.LoadSigner(path) }

// ParsePublicKey reads a PEM PUBLIC KEY (PKIX) of Ed25519.
func ParsePublicKey(b []byte) (ed25519.PublicKey, error) { return seal.ParsePublicKey(b) }
