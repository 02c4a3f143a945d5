package app

import (
	"crypto/tls"
	"io"
	"slices"
	"testing"

	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/httpserve"
)

// The served configuration is httpserve.TLSConfig's (AEAD suites only, tested in
// api), with the certificate made for local use.
func TestTLSConfigIsTheAPIs(t *testing.T) {
	t.Parallel()
	c := config.Default()
	c.DataDir = t.TempDir()
	cfg, err := TLSConfig(c, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := httpserve.TLSConfig()
	if cfg.MinVersion != tls.VersionTLS12 || !slices.Equal(cfg.CipherSuites, want.CipherSuites) || len(cfg.Certificates) != 1 {
		t.Errorf("MinVersion %x, suites %v, %d certificates; want TLS 1.2, %v, one certificate",
			cfg.MinVersion, cfg.CipherSuites, len(cfg.Certificates), want.CipherSuites)
	}
}
