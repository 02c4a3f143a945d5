package pgcluster_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/ledger/pgcluster"
	"github.com/paygate/gateway/ledger/pgtest"
)

func login(ctx context.Context, u string) error {
	db, err := sql.Open("pgx", u)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

// The clusters pgcluster makes (docs/security.md): scram-sha-256 for every
// role but the superuser over the socket, and TCP only with TLS that a
// client can verify against the cluster's own CA.
func TestLoginNeedsPasswordAndTLS(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := pgtest.StartLoopbackCluster(t)
	tcp := "127.0.0.1:" + strconv.Itoa(c.Port())
	appPW, err := c.Password(pgcluster.AppRole)
	if err != nil {
		t.Fatal(err)
	}
	verified, err := c.TLSURL(pgcluster.AppRole, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	appSocket, err := c.RoleURL(pgcluster.AppRole, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	otherCA := filepath.Join(t.TempDir(), "other-ca.crt")
	wrongCA := strings.Replace(verified, url.QueryEscape(c.CAFile()), url.QueryEscape(otherCA), 1)
	if wrongCA == verified {
		t.Fatalf("the CA file is not in %s", verified)
	}
	if err := os.WriteFile(otherCA, selfSignedCA(t), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		url  string
		ok   bool
	}{
		// sslmode=prefer falls back to plain TCP when the server has no
		// TLS: these were let in by trust before.
		{"superuser over TCP, no password", "postgres://postgres@" + tcp + "/postgres?sslmode=prefer", false},
		{"app role over TCP, no password", "postgres://gateway_app@" + tcp + "/postgres?sslmode=prefer", false},
		{"app role over TCP, wrong password", "postgres://gateway_app:wrong@" + tcp + "/postgres?sslmode=require", false},
		{"app role over plain TCP with its password", "postgres://gateway_app:" + appPW + "@" + tcp + "/postgres?sslmode=disable", false},
		{"app role over the socket, no password", withUser(t, c.URL("postgres"), url.User(pgcluster.AppRole)), false},
		{"app role, verify-full against another CA", wrongCA, false},
		{"app role, verify-full with the cluster's CA", verified, true},
		{"app role over the socket with its password", appSocket, true},
		{"superuser over the socket (peer)", c.URL("postgres"), true},
	}
	for _, tt := range tests {
		err := login(ctx, tt.url)
		if (err == nil) != tt.ok {
			t.Errorf("%s: login err = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}

	// Passwords are kept as SCRAM verifiers, and their files are 0600.
	db, err := sql.Open("pgx", c.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, role := range []string{pgcluster.OwnerRole, pgcluster.AppRole} {
		var stored string
		var super bool
		if err := db.QueryRowContext(ctx, "select rolpassword, rolsuper from pg_authid where rolname = $1", role).Scan(&stored, &super); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(stored, "SCRAM-SHA-256$") || super {
			t.Errorf("%s: stored password %.14q…, superuser %v; want a SCRAM verifier, no superuser", role, stored, super)
		}
		st, err := os.Stat(filepath.Join(c.Dir(), "secrets", role+".password"))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s's password file: %v, mode %v; want 0600", role, err, st.Mode().Perm())
		}
	}
}

// withUser is u as another user.
func withUser(t *testing.T, u string, user *url.Userinfo) string {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	parsed.User = user
	return parsed.String()
}

// selfSignedCA is a CA certificate (PEM) that signed nothing of the
// cluster's.
func selfSignedCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "not the cluster's CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
