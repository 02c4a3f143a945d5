package pgha

import (
	"net/url"
	"os"
	"path/filepath"

	"github.com/paygate/gateway/ledger/pgcluster"
)

// TLS of the formation (docs/ha.md, "Authentication and TLS of the
// formation"): a CA the formation makes once (tls-ca/, this process's
// user's, 0700; its key never leaves it), a certificate for the loopback
// names per server (tls/<name>.crt, .key 0600, the server user's), handed
// to pg_autoctl create, which serves them and verifies them
// (--ssl-mode verify-full) on its own connections: node to monitor, standby
// to primary. The gateway's URL asks for verify-full with tls/ca.crt.
// A formation made before this (formation.json without "tls") keeps
// running without TLS: pg_autoctl's settings are made at creation.

func (f *Formation) caDir() string  { return filepath.Join(f.dir, "tls-ca") }
func (f *Formation) tlsDir() string { return filepath.Join(f.dir, "tls") }

// CAFile is the CA certificate that signed the formation's servers' (a
// copy readable by the server user), for sslrootcert; "" without TLS.
func (f *Formation) CAFile() string {
	if !f.tls {
		return ""
	}
	return filepath.Join(f.tlsDir(), "ca.crt")
}

// tlsArgs are pg_autoctl create's TLS options for keeper k, making its
// certificate first; --no-ssl for a formation without TLS.
func (f *Formation) tlsArgs(k *Keeper) ([]string, error) {
	if !f.tls {
		return []string{"--no-ssl"}, nil
	}
	if err := os.MkdirAll(f.tlsDir(), 0o755); err != nil {
		return nil, err
	}
	if err := pgcluster.Chown(f.tlsDir()); err != nil {
		return nil, err
	}
	crt, key := filepath.Join(f.tlsDir(), k.Name+".crt"), filepath.Join(f.tlsDir(), k.Name+".key")
	if err := pgcluster.IssueServerCert(f.caDir(), crt, key); err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(pgcluster.CAFileIn(f.caDir()))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(f.CAFile(), ca, 0o644); err != nil { //nolint:gosec // a certificate, no secret
		return nil, err
	}
	if err := pgcluster.Chown(f.CAFile()); err != nil {
		return nil, err
	}
	return []string{"--ssl-ca-file", f.CAFile(), "--server-cert", crt, "--server-key", key, "--ssl-mode", "verify-full"}, nil
}

// sslQuery is the TLS part of the formation's URLs.
func (f *Formation) sslQuery() string {
	if !f.tls {
		return "sslmode=disable"
	}
	return "sslmode=verify-full&sslrootcert=" + url.QueryEscape(f.CAFile())
}
