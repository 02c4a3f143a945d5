package pgcluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"time"
)

// The cluster's TLS (docs/security.md, "Connections to PostgreSQL"): a CA
// of its own, made once (secrets/ca.crt, ca.key), and a server certificate
// signed by it for the loopback names (data/server.crt, server.key, where
// PostgreSQL's ssl = on looks). A client that trusts ca.crt can connect
// with sslmode=verify-full to 127.0.0.1, ::1 or localhost.

const certLifetime = 10 * 365 * 24 * time.Hour

// CAFile is the path of the CA certificate that signed the server's, for
// sslrootcert.
func (c *Cluster) CAFile() string { return CAFileIn(c.secretsDir()) }

// CAFileIn is the CA certificate of the CA kept in caDir.
func CAFileIn(caDir string) string { return filepath.Join(caDir, "ca.crt") }

// ensureTLS makes the CA and the server certificate when they are missing.
func (c *Cluster) ensureTLS(owner *user.User) error {
	serverCrt := filepath.Join(c.dataDir(), "server.crt")
	if _, err := os.Stat(serverCrt); err == nil {
		if _, err := os.Stat(c.CAFile()); err == nil {
			return nil
		}
	}
	return issueServerCert(c.secretsDir(), serverCrt, filepath.Join(c.dataDir(), "server.key"), owner)
}

// IssueServerCert writes a server certificate for the loopback names
// (localhost, 127.0.0.1, ::1) and its key (0600), both owned by the user
// the server runs as, signed by the CA kept in caDir (CAFileIn, ca.key:
// made on first use, 0600, this process's user's): for the servers other
// programs start (the pg_auto_failover formation's, internal/pgha).
func IssueServerCert(caDir, certPath, keyPath string) error {
	owner, err := serverUser()
	if err != nil {
		return err
	}
	return issueServerCert(caDir, certPath, keyPath, owner)
}

func issueServerCert(caDir, certPath, keyPath string, owner *user.User) error {
	if err := os.MkdirAll(caDir, 0o700); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	caCert, caKey, err := loadOrMakeCA(caDir)
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(certLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	// The key first: a certificate without its key would pass the check
	// above at the next start.
	if err := writeServerFile(keyPath, pemBlock("EC PRIVATE KEY", keyDER), owner); err != nil {
		return err
	}
	return writeServerFile(certPath, pemBlock("CERTIFICATE", der), owner)
}

// loadOrMakeCA returns the cluster's CA, making it on first use.
func loadOrMakeCA(caDir string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	keyPath := filepath.Join(caDir, "ca.key")
	caFile := CAFileIn(caDir)
	if crtPEM, err := os.ReadFile(caFile); err == nil {
		keyPEM, err := os.ReadFile(keyPath)
		if err != nil {
			return nil, nil, fmt.Errorf("pgcluster: the CA certificate %s is there but not its key: %w", caFile, err)
		}
		return parseCA(crtPEM, keyPEM)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("pgcluster: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "gateway PostgreSQL CA " + caDir},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(certLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("pgcluster: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("pgcluster: %w", err)
	}
	if err := writeServerFile(keyPath, pemBlock("EC PRIVATE KEY", keyDER), nil); err != nil {
		return nil, nil, err
	}
	if err := writeServerFile(caFile, pemBlock("CERTIFICATE", der), nil); err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("pgcluster: %w", err)
	}
	return cert, key, nil
}

func parseCA(crtPEM, keyPEM []byte) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	cb, _ := pem.Decode(crtPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, errors.New("pgcluster: the cluster's CA files are not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("pgcluster: %w", err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("pgcluster: %w", err)
	}
	return cert, key, nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}
