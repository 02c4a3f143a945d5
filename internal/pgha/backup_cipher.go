package pgha

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/paygate/gateway/ledger/pgcluster"
)

// Encryption of the backup repository (issue 31, point 4; docs/operations.md,
// "Backups"): every file pgBackRest writes into it — backups, WAL, its
// manifests — is encrypted with aes-256-cbc (repo1-cipher-type) under a
// generated passphrase. The passphrase is not in pgbackrest.conf: it is in
// cipher/cipher.conf (0600 in a 0700 directory, the server user's, who runs
// archive-push from PostgreSQL), which every pgbackrest command reads
// through --config-include-path. A copy of the repository without it is
// unreadable; so is the repository for an operator who lost it, which is why
// docs/operations.md says to keep a copy with the data key's. pgBackRest
// fixes the choice when the stanza is created: a repository made before
// (a stanza, no cipher line) stays unencrypted.

// cipherType is pgBackRest's repository cipher.
const cipherType = "aes-256-cbc"

func (r *Repo) cipherDir() string { return filepath.Join(r.dir, "cipher") }

// CipherFile is the file holding the repository's passphrase, "" for an
// unencrypted repository.
func (r *Repo) CipherFile() string {
	if !r.encrypted {
		return ""
	}
	return filepath.Join(r.cipherDir(), "cipher.conf")
}

// decideEncryption sets r.encrypted for a repository being configured: an
// existing configuration says so; without one, or without a stanza yet, the
// repository is encrypted.
func (r *Repo) decideEncryption() {
	b, err := os.ReadFile(r.conf)
	if err != nil || strings.Contains(string(b), "repo1-cipher-type="+cipherType) {
		r.encrypted = true
		return
	}
	_, err = os.Stat(filepath.Join(r.dir, "repo", "backup", r.stanza))
	r.encrypted = err != nil // no stanza yet: nothing to stay compatible with
}

// readEncryption sets r.encrypted from an existing configuration.
func (r *Repo) readEncryption() {
	b, err := os.ReadFile(r.conf)
	r.encrypted = err == nil && strings.Contains(string(b), "repo1-cipher-type="+cipherType)
}

// ensurePassphrase makes the passphrase the first time.
func (r *Repo) ensurePassphrase() error {
	if !r.encrypted {
		return nil
	}
	if _, err := os.Stat(filepath.Join(r.dir, "repo", "backup", r.stanza)); err == nil && !exists(r.CipherFile()) {
		// A new passphrase would not open what the stanza holds.
		_, err := r.configArgs()
		return err
	}
	if err := os.MkdirAll(r.cipherDir(), 0o700); err != nil {
		return fmt.Errorf("pgha: %w", err)
	}
	if err := pgcluster.Chown(r.cipherDir()); err != nil {
		return fmt.Errorf("pgha: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return fmt.Errorf("pgha: %w", err)
	}
	// O_EXCL: an existing passphrase is never replaced; the repository is
	// encrypted under it.
	f, err := os.OpenFile(r.CipherFile(), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pgha: %w", err)
	}
	body := "# The passphrase of the pgBackRest repository (internal/pgha, docs/operations.md \"Backups\").\n" +
		"# Without it no backup in the repository can be restored: keep a copy with the data key's.\n" +
		"[global]\nrepo1-cipher-pass=" + hex.EncodeToString(raw) + "\n"
	if _, err := f.WriteString(body); err != nil {
		f.Close()
		return fmt.Errorf("pgha: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("pgha: %w", err)
	}
	return pgcluster.Chown(r.CipherFile())
}

// configArgs are the options that make every pgbackrest command (and the
// archive command) read the repository's configuration and passphrase. An
// encrypted repository whose passphrase is missing is refused here, with
// what to do, rather than by pgBackRest's "unable to decrypt" further on.
func (r *Repo) configArgs() ([]string, error) {
	args := []string{"--config=" + r.conf}
	if !r.encrypted {
		return args, nil
	}
	if _, err := os.Stat(r.CipherFile()); err != nil {
		return nil, fmt.Errorf("pgha: the backup repository %s is encrypted (%s) and its passphrase %s cannot be read (%w): "+
			"put back the copy kept with the data key (docs/operations.md, \"Backups\"); without it no backup can be restored",
			filepath.Join(r.dir, "repo"), cipherType, r.CipherFile(), err)
	}
	return append(args, "--config-include-path="+r.cipherDir()), nil
}

// Cipher is the repository's cipher as pgBackRest reports it (aes-256-cbc,
// or none).
func (r *Repo) Cipher(ctx context.Context) (string, error) {
	out, err := r.Run(ctx, "info", "--output=json")
	if err != nil {
		return "", err
	}
	var stanzas []struct {
		Repo []struct {
			Cipher string `json:"cipher"`
		} `json:"repo"`
	}
	if err := json.Unmarshal([]byte(out), &stanzas); err != nil {
		return "", fmt.Errorf("pgha: pgbackrest info: %w", err)
	}
	if len(stanzas) == 0 || len(stanzas[0].Repo) == 0 {
		return "", errors.New("pgha: pgbackrest info lists no repository")
	}
	return stanzas[0].Repo[0].Cipher, nil
}
