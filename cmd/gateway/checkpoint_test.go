package main

import (
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/gatewaytest"
)

// The auditor's round trip through the commands: a key pair, a checkpoint
// exported as a file, verify against it with the public key alone; then a
// rolled-back tail is a named failure, and a key that did not sign it too.
func TestAuditCheckpointCommands(t *testing.T) {
	t.Parallel()
	g, _ := newShopGateway(t, "Checkpoint shop", "USD", "USD 10.00", "USD 20.00")
	dir := t.TempDir()
	key := g.checkpointKey(dir)
	if st, err := os.Stat(key); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the private key file: %v, %v", st, err)
	}
	g.mustFail("file exists", "audit", "checkpoint-key", "--out", key)
	g.mustFail("no checkpoint key", "audit", "checkpoint")

	g.env["GATEWAY_CHECKPOINT_KEY_FILE"] = key
	file := filepath.Join(dir, "cp.json")
	g.mustRun("audit", "checkpoint", "--out", file)
	delete(g.env, "GATEWAY_CHECKPOINT_KEY_FILE") // the auditor has the public key only

	g.mustFail("--checkpoint needs --public-key", "audit", "verify", "--checkpoint", file)
	js := g.mustRun("audit", "verify", "--checkpoint", file, "--public-key", key+".pub", "--json")
	var rep struct {
		Problems   json.RawMessage
		Heads      []struct{ Seq int64 }
		Checkpoint *struct{ Root string }
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	if string(rep.Problems) != "[]" || len(rep.Heads) != 1 || rep.Heads[0].Seq != 2 || rep.Checkpoint == nil {
		t.Errorf("audit verify --json against the checkpoint: %s", js)
	}
	if out := g.mustRun("audit", "verify", "--checkpoint", file, "--public-key", key+".pub"); !strings.Contains(out, "checked against the checkpoint of") {
		t.Errorf("audit verify against the checkpoint: %s", out)
	}

	// Another key pair: the checkpoint was not signed by it.
	other := filepath.Join(dir, "other.key")
	g.mustRun("audit", "checkpoint-key", "--out", other)
	r := g.run("audit", "verify", "--checkpoint", file, "--public-key", other+".pub")
	if r.code() != 1 || !strings.Contains(r.stdout, "BREAK checkpoint_signature") {
		t.Errorf("a checkpoint checked with another key: exit %d:\n%s", r.code(), r.stdout)
	}

	// The last entry removed and the head rewound.
	l := g.openTestLedger()
	rollBackSecondEntry(t, l)
	r = g.run("audit", "verify", "--checkpoint", file, "--public-key", key+".pub")
	if r.code() != 1 || !strings.Contains(r.stdout, "BREAK checkpoint_rollback") {
		t.Errorf("a rolled-back journal: exit %d:\n%s", r.code(), r.stdout)
	}
}

// With a key configured, serve's checkpoint worker signs one at start (and
// every GATEWAY_CHECKPOINT_EVERY after): a stored checkpoint appears whose
// signature the public key verifies. Without a key there is no worker.
func TestServeWritesCheckpoints(t *testing.T) {
	t.Parallel()
	g, _ := newShopGateway(t, "Checkpointed shop", "USD", "USD 1.00")
	key := g.checkpointKey(t.TempDir())
	g.env["GATEWAY_CHECKPOINT_KEY_FILE"] = key
	s := g.serve()
	s.mustBeHealthy()
	l := g.openTestLedger()
	var signed, sig []byte
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := l.DB().QueryRow(`select signed, signature from audit_checkpoints order by id desc limit 1`).Scan(&signed, &sig)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint stored by the worker: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // polling for a condition, not synchronising
	}
	s.mustStop()
	pem, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := audit.ParsePublicKey(pem)
	if err != nil || !ed25519.Verify(pub, signed, sig) || !strings.HasPrefix(string(signed), audit.PurposeCheckpoint+"\ntime ") {
		t.Errorf("the stored checkpoint does not verify (%v): %q", err, signed)
	}
}

// rollBackSecondEntry removes the one merchant's second entry of l's
// database and rewinds its head, as an attacker would: what points at the
// entry goes first.
func rollBackSecondEntry(t *testing.T, l *gatewaytest.Gateway) {
	t.Helper()
	if _, err := l.DB().Exec(`do $$ declare r record; begin for r in select conrelid::regclass::text as t, conname from pg_constraint where contype = 'f' and confrelid in ('entries'::regclass, 'postings'::regclass, 'bill_lines'::regclass) loop execute format('alter table %s drop constraint %I', r.t, r.conname); end loop; end $$;`); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`delete from bill_lines where merchant_seq = 2`, `delete from postings where merchant_seq = 2`,
		`delete from entries where merchant_seq = 2`,
	} {
		tamper(t, l, q)
	}
	if _, err := l.DB().Exec(`update ledger_heads set last_seq = 1, last_hash = (select hash from entries where merchant_seq = 1)`); err != nil {
		t.Fatal(err)
	}
}
