package httpserve

import (
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// isAEADSuite reports whether a TLS 1.2 suite encrypts with an AEAD cipher.
func isAEADSuite(name string) bool {
	return strings.Contains(name, "_GCM_") || strings.Contains(name, "_CHACHA20_POLY1305")
}

// The configured suites: TLS 1.2 or later, each suite a secure ECDHE one
// with an AEAD cipher.
func TestTLSConfigListsAEADSuitesOnly(t *testing.T) {
	t.Parallel()
	cfg := TLSConfig()
	if cfg.MinVersion != tls.VersionTLS12 {
		t.Errorf("MinVersion %x, want TLS 1.2", cfg.MinVersion)
	}
	if len(cfg.CipherSuites) == 0 {
		t.Fatal("no CipherSuites: Go's defaults (which include CBC suites) would apply")
	}
	secure := map[uint16]*tls.CipherSuite{}
	for _, s := range tls.CipherSuites() {
		secure[s.ID] = s
	}
	for _, id := range cfg.CipherSuites {
		s, ok := secure[id]
		switch {
		case !ok:
			t.Errorf("suite %s is not among Go's secure suites", tls.CipherSuiteName(id))
		case !isAEADSuite(s.Name):
			t.Errorf("suite %s is not AEAD", s.Name)
		case !strings.HasPrefix(s.Name, "TLS_ECDHE_"):
			t.Errorf("suite %s has no forward secrecy", s.Name)
		case !slices.Contains(s.SupportedVersions, tls.VersionTLS12):
			t.Errorf("suite %s is not a TLS 1.2 suite", s.Name)
		}
	}
}

// The suites as a client sees them: offering only CBC suites over TLS 1.2
// fails the handshake; offering an AEAD suite succeeds.
func TestTLSRefusesCBCSuites(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.TLS = TLSConfig()
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	srv.StartTLS()
	defer srv.Close()
	addr := srv.Listener.Addr().String()

	var cbc, aead []uint16
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		if !slices.Contains(s.SupportedVersions, tls.VersionTLS12) {
			continue
		}
		switch {
		case strings.Contains(s.Name, "_CBC_"):
			cbc = append(cbc, s.ID)
		case isAEADSuite(s.Name):
			aead = append(aead, s.ID)
		}
	}
	if len(cbc) == 0 || len(aead) == 0 {
		t.Fatalf("Go lists %d CBC and %d AEAD suites for TLS 1.2", len(cbc), len(aead))
	}
	dial := func(suites []uint16) (*tls.ConnectionState, error) {
		c, err := tls.Dial("tcp", addr, &tls.Config{
			InsecureSkipVerify: true, //nolint:gosec // a test of the server's suites, against its own test certificate
			MinVersion:         tls.VersionTLS12, MaxVersion: tls.VersionTLS12, CipherSuites: suites,
		})
		if err != nil {
			return nil, err
		}
		defer c.Close()
		st := c.ConnectionState()
		return &st, nil
	}
	if st, err := dial(cbc); err == nil {
		t.Errorf("a CBC-only TLS 1.2 client got %s; want a failed handshake", tls.CipherSuiteName(st.CipherSuite))
	}
	for _, id := range cbc {
		if st, err := dial([]uint16{id}); err == nil {
			t.Errorf("%s accepted: %s", tls.CipherSuiteName(id), tls.CipherSuiteName(st.CipherSuite))
		}
	}
	st, err := dial(aead)
	if err != nil {
		t.Fatalf("an AEAD TLS 1.2 client: %v", err)
	}
	if !isAEADSuite(tls.CipherSuiteName(st.CipherSuite)) || st.Version != tls.VersionTLS12 {
		t.Errorf("negotiated %s, version %x", tls.CipherSuiteName(st.CipherSuite), st.Version)
	}
	// TLS 1.3 stays available (its suites are all AEAD).
	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13}) //nolint:gosec // as above
	if err != nil {
		t.Fatalf("TLS 1.3: %v", err)
	}
	c.Close()
}
