package pgcluster

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
)

// Authentication of the clusters pgcluster makes (docs/security.md,
// "Database roles" and "Connections to PostgreSQL"):
//
//   - the unix socket lets the superuser postgres in by peer authentication,
//     and only from the OS user the server runs as or root (pg_ident map
//     "cluster_admin"); the socket's directory is 0700 besides;
//   - every other role, over the socket or TCP, gives its password, checked
//     by scram-sha-256 (password_encryption = scram-sha-256, so no MD5 hash
//     is ever stored);
//   - TCP is loopback only and TLS only (hostssl): a plain TCP connection
//     matches no line and is refused.
//
// Options.TrustTCP keeps the old trust lines for the loopback test pair of
// internal/pgha and the chaos tools, which connect as postgres over TCP.

// adminMap is the pg_ident map of the socket's peer line.
const adminMap = "cluster_admin"

func secureHBA() string {
	return strings.Join([]string{
		"# Written by ledger/pgcluster at each start (docs/security.md): edits are lost.",
		"# TYPE  DATABASE     USER      ADDRESS       METHOD",
		"local   all          postgres                peer map=" + adminMap,
		"local   all          all                     scram-sha-256",
		"hostssl all          all       127.0.0.1/32  scram-sha-256",
		"hostssl all          all       ::1/128       scram-sha-256",
		"hostssl replication  all       127.0.0.1/32  scram-sha-256",
		"hostssl replication  all       ::1/128       scram-sha-256",
		"",
	}, "\n")
}

func trustHBA() string {
	return strings.Join([]string{
		"# Written by ledger/pgcluster at each start: Options.TrustTCP, a loopback test cluster.",
		"local   all          all                     trust",
		"host    all          all       127.0.0.1/32  trust",
		"host    all          all       ::1/128       trust",
		"local   replication  all                     trust",
		"host    replication  all       127.0.0.1/32  trust",
		"host    replication  all       ::1/128       trust",
		"",
	}, "\n")
}

// identMap lets the server's OS user and root be postgres over the socket.
func identMap(owner *user.User) (string, error) {
	name := ""
	if owner != nil {
		name = owner.Username
	} else {
		u, err := user.Current()
		if err != nil {
			return "", fmt.Errorf("pgcluster: %w", err)
		}
		name = u.Username
	}
	lines := []string{"# Written by ledger/pgcluster at each start (docs/security.md).",
		adminMap + " " + name + " " + superuser}
	if name != "root" {
		lines = append(lines, adminMap+" root "+superuser)
	}
	return strings.Join(lines, "\n") + "\n", nil
}

// writeAuth writes pg_hba.conf and pg_ident.conf of the data directory
// before each start, so a cluster made by an older version (trust
// everywhere) is secured by the next start too.
func (c *Cluster) writeAuth(owner *user.User, trustTCP bool) error {
	hba := secureHBA()
	if trustTCP {
		hba = trustHBA()
	}
	ident, err := identMap(owner)
	if err != nil {
		return err
	}
	for name, body := range map[string]string{"pg_hba.conf": hba, "pg_ident.conf": ident} {
		if err := writeServerFile(filepath.Join(c.dataDir(), name), []byte(body), owner); err != nil {
			return err
		}
	}
	return nil
}

// writeServerFile writes a 0600 file that the server reads.
func writeServerFile(path string, body []byte, owner *user.User) error {
	if err := os.WriteFile(path, body, 0o600); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if owner != nil {
		if err := os.Chown(path, atoi(owner.Uid), atoi(owner.Gid)); err != nil {
			return fmt.Errorf("pgcluster: %w", err)
		}
	}
	return nil
}

// secretsDir holds what the gateway reads and the server never does: the
// generated passwords and the CA's key. 0700, its files 0600, owned by this
// process's user.
func (c *Cluster) secretsDir() string { return filepath.Join(c.dir, "secrets") }

// Password returns role's generated password, making it on first use
// (secrets/<role>.password, 0600): 32 random bytes in hex, so it needs no
// quoting anywhere.
func (c *Cluster) Password(role string) (string, error) {
	return RolePassword(c.secretsDir(), role)
}

// RolePassword is role's generated password in dir (dir/<role>.password,
// 0600, dir 0700), made on first use: for the clusters other programs make
// (the pg_auto_failover formation of cmd/ha).
func RolePassword(dir, role string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("pgcluster: %w", err)
	}
	path := filepath.Join(dir, role+".password")
	b, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("pgcluster: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("pgcluster: %w", err)
	}
	pw := hex.EncodeToString(raw)
	// O_EXCL: two processes starting at once do not each write their own.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, os.ErrExist) {
		return RolePassword(dir, role)
	}
	if err != nil {
		return "", fmt.Errorf("pgcluster: %w", err)
	}
	if _, err := f.WriteString(pw + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("pgcluster: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("pgcluster: %w", err)
	}
	return pw, nil
}
