package main

import (
	"crypto/tls"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/paygate/gateway/api"
)

// The served configuration is api.TLSConfig's (AEAD suites only, tested in
// api), with the certificate made for local use.
func TestTLSConfigIsTheAPIs(t *testing.T) {
	dir := t.TempDir()
	e := &env{getenv: func(k string) string {
		if k == "GATEWAY_DATA_DIR" {
			return dir
		}
		return ""
	}, stdout: io.Discard, stderr: io.Discard, log: slog.New(slog.DiscardHandler)}
	cfg, err := tlsConfig(e)
	if err != nil {
		t.Fatal(err)
	}
	want := api.TLSConfig()
	if cfg.MinVersion != tls.VersionTLS12 || !slices.Equal(cfg.CipherSuites, want.CipherSuites) || len(cfg.Certificates) != 1 {
		t.Errorf("MinVersion %x, suites %v, %d certificates; want TLS 1.2, %v, one certificate",
			cfg.MinVersion, cfg.CipherSuites, len(cfg.Certificates), want.CipherSuites)
	}
}
