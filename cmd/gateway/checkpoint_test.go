package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The auditor's round trip through the commands: a key pair, a checkpoint
// exported as a file, verify against it with the public key alone; then a
// rolled-back tail is a named failure, and a key that did not sign it too.
func TestAuditCheckpointCommands(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	c := g.createMerchant("Checkpoint shop", "USD")
	g.deposit(c.ShopNo, "USD", "10.00")
	g.deposit(c.ShopNo, "USD", "20.00")
	dir := t.TempDir()
	key := filepath.Join(dir, "checkpoint.key")
	g.mustRun("audit", "checkpoint-key", "--out", key)
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
	for _, q := range []string{
		`delete from bill_lines where merchant_seq = 2`, `delete from postings where merchant_seq = 2`,
		`delete from entries where merchant_seq = 2`,
	} {
		tamper(t, l, q)
	}
	if _, err := l.DB().Exec(`update ledger_heads set last_seq = 1, last_hash = (select hash from entries where merchant_seq = 1)`); err != nil {
		t.Fatal(err)
	}
	r = g.run("audit", "verify", "--checkpoint", file, "--public-key", key+".pub")
	if r.code() != 1 || !strings.Contains(r.stdout, "BREAK checkpoint_rollback") {
		t.Errorf("a rolled-back journal: exit %d:\n%s", r.code(), r.stdout)
	}
}
