package app

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/httpserve"
)

// TLSConfig returns the server's TLS configuration: the certificate and key
// of GATEWAY_TLS_CERT and GATEWAY_TLS_KEY, or else a self-signed certificate
// for local use, made once in $GATEWAY_DATA_DIR/tls (and again when it
// expires). The certificate's SHA-256 fingerprint is printed so that a
// client can pin it (on out). Versions and suites are httpserve.TLSConfig's (AEAD
// only).
func TLSConfig(cfg *config.Config, out io.Writer) (*tls.Config, error) {
	certFile, keyFile := cfg.TLSCert, cfg.TLSKey
	if certFile == "" {
		dir := filepath.Join(cfg.DataDir, "tls")
		certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
		if err := ensureSelfSigned(certFile, keyFile); err != nil {
			return nil, err
		}
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate: %w", err)
	}
	sum := sha256.Sum256(cert.Certificate[0])
	fmt.Fprintf(out, "TLS certificate %s, SHA-256 fingerprint %s\n", certFile, Fingerprint(sum[:]))
	return httpserve.TLSConfig(cert), nil
}

// Fingerprint is a certificate digest as colon-separated hex pairs, as
// serve prints it.
func Fingerprint(b []byte) string {
	h := strings.ToUpper(hex.EncodeToString(b))
	var parts []string
	for i := 0; i < len(h); i += 2 {
		parts = append(parts, h[i:i+2])
	}
	return strings.Join(parts, ":")
}

// selfSignedValidity is how long a generated certificate lasts.
const selfSignedValidity = 365 * 24 * time.Hour

func ensureSelfSigned(certFile, keyFile string) error {
	if b, err := os.ReadFile(certFile); err == nil {
		if blk, _ := pem.Decode(b); blk != nil {
			if c, err := x509.ParseCertificate(blk.Bytes); err == nil && time.Now().Add(24*time.Hour).Before(c.NotAfter) {
				if _, err := os.Stat(keyFile); err == nil {
					return nil
				}
			}
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "gateway local development", Organization: []string{"gateway (self-signed)"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(selfSignedValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	if host != "" {
		tmpl.DNSNames = append(tmpl.DNSNames, host)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(certFile), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}
