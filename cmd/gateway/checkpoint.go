package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"os"

	"github.com/paygate/gateway/internal/audit"
)

// checkpointKeyVar names the file of the checkpoint signing key
// (docs/operations.md#the-checkpoint-key). The database never holds it.
const checkpointKeyVar = "GATEWAY_CHECKPOINT_KEY_FILE"

// cmdAuditCheckpointKey makes a checkpoint key pair: FILE (private, 0600,
// never overwritten) and FILE.pub, which auditors get.
func cmdAuditCheckpointKey(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "audit checkpoint-key", "Make an Ed25519 key pair for signing checkpoints: FILE (private, mode 600) and FILE.pub\n"+
		"(for auditors). Keep FILE off the database's machines (docs/operations.md).")
	out := fs.String("out", "", "the private key file to create (required; never overwritten)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if *out == "" {
		return usageError("--out is required")
	}
	private, public, err := audit.GenerateKey()
	if err != nil {
		return err
	}
	if err := writeNew(*out, private, 0o600); err != nil {
		return &exitError{code: 2, msg: "--out: " + err.Error()}
	}
	if err := writeNew(*out+".pub", public, 0o644); err != nil {
		return &exitError{code: 2, msg: "--out: " + err.Error()}
	}
	pub, err := audit.ParsePublicKey(public)
	if err != nil {
		return err
	}
	return printJSON(e, map[string]any{"privateKeyFile": *out, "publicKeyFile": *out + ".pub", "keyId": audit.KeyID(pub)})
}

// writeNew creates path with b, failing if it exists.
func writeNew(path string, b []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// checkpointSigner loads the signing key named by --key-file or the
// variable.
func checkpointSigner(e *env, flagValue string) (*audit.Signer, error) {
	path := flagValue
	if path == "" {
		path = e.getenv(checkpointKeyVar)
	}
	if path == "" {
		return nil, usageError("no checkpoint key: --key-file or " + checkpointKeyVar + " (make one with gateway audit checkpoint-key)")
	}
	s, err := audit.LoadSigner(path)
	if err != nil {
		return nil, &exitError{code: 2, msg: "checkpoint key: " + err.Error()}
	}
	return s, nil
}

// cmdAuditCheckpoint signs and stores a checkpoint and exports it.
func cmdAuditCheckpoint(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "audit checkpoint", "Sign every merchant's journal head and store the checkpoint; print it (or write --out)\n"+
		"for an auditor to keep (docs/audit.md#checkpoints).")
	keyFile := fs.String("key-file", "", "the private key file (default: $"+checkpointKeyVar+")")
	out := fs.String("out", "", "write the checkpoint file here instead of printing it")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	signer, err := checkpointSigner(e, *keyFile)
	if err != nil {
		return err
	}
	if cfg, err := e.config(); err != nil {
		return err
	} else if len(cfg.Cells) > 0 { // over cells: cells_audit.go
		return checkpointCells(ctx, e, signer, *out)
	}
	s, l, err := openLedger(ctx, e)
	if err != nil {
		return err
	}
	defer s.Close()
	defer l.Close()
	c, err := audit.New(l.Ledger).Checkpoint(ctx, signer)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if *out == "" {
		_, err = e.stdout.Write(b)
		return err
	}
	if err := writeNew(*out, b, 0o644); err != nil {
		return &exitError{code: 2, msg: "--out: " + err.Error()}
	}
	return printJSON(e, map[string]any{"file": *out, "time": c.Time, "treeSize": c.TreeSize, "root": c.Root, "keyId": c.KeyID})
}

// verifyCheckpoint reads --checkpoint and the public key it is checked
// with: --public-key, or the public half of the signing key. --public-key
// alone checks the period closes' signatures (docs/audit.md#period-close).
func verifyCheckpoint(e *env, file, publicKey string) (*audit.Checkpoint, ed25519.PublicKey, error) {
	if file == "" {
		if publicKey != "" {
			pub, err := readPublicKey(publicKey)
			return nil, pub, err
		}
		return nil, nil, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, &exitError{code: 2, msg: "--checkpoint: " + err.Error()}
	}
	c, err := audit.ParseCheckpoint(b)
	if err != nil {
		return nil, nil, &exitError{code: 2, msg: "--checkpoint: " + err.Error()}
	}
	pub, err := checkpointPublicKey(e, publicKey)
	return c, pub, err
}

// checkpointPublicKey is --public-key, or the public half of the signing
// key of the variable.
func checkpointPublicKey(e *env, publicKey string) (ed25519.PublicKey, error) {
	if publicKey != "" {
		return readPublicKey(publicKey)
	}
	if e.getenv(checkpointKeyVar) == "" {
		return nil, usageError("--checkpoint needs --public-key (or " + checkpointKeyVar + ")")
	}
	s, err := checkpointSigner(e, "")
	if err != nil {
		return nil, err
	}
	return s.Public(), nil
}

// readPublicKey reads --public-key.
func readPublicKey(path string) (ed25519.PublicKey, error) {
	pb, err := os.ReadFile(path)
	if err != nil {
		return nil, &exitError{code: 2, msg: "--public-key: " + err.Error()}
	}
	pub, err := audit.ParsePublicKey(pb)
	if err != nil {
		return nil, &exitError{code: 2, msg: "--public-key: " + err.Error()}
	}
	return pub, nil
}
