package audit

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"
)

// A checkpoint written and read back verifies; the time is written with
// six decimals whatever its value, as in the statement signed.
func TestCheckpointRoundTrip(t *testing.T) {
	t.Parallel()
	_, key, _ := ed25519.GenerateKey(nil)
	s := NewSigner(key)
	zero := hex.EncodeToString(make([]byte, 32))
	c := &Checkpoint{Version: 1, Time: Stamp{time.Date(2026, 11, 27, 9, 42, 17, 0, time.UTC)}, KeyID: s.KeyID(),
		TreeSize: 2, Heads: []CheckpointHead{{Merchant: 1, Seq: 0, Hash: zero}, {Merchant: 7, Seq: 3, Hash: zero}}}
	var err error
	if c.Root, err = c.computeRoot(); err != nil {
		t.Fatal(err)
	}
	c.Signature = hex.EncodeToString(s.Sign(PurposeCheckpoint, c.Statement()))
	b, err := jsonMarshal(c)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseCheckpoint(b)
	if err != nil {
		t.Fatal(err)
	}
	if ps := back.Check(s.Public()); len(ps) != 0 {
		t.Errorf("a checkpoint read back: %v", ps)
	}
	if want := "time 2026-11-27T09:42:17.000000Z\n"; string(c.Statement()[:len(want)]) != want {
		t.Errorf("statement %q", c.Statement())
	}
}

// ParseCheckpoint and Check take any bytes without panicking, and a file
// that passes Check re-encodes to the same root.
func FuzzParseCheckpoint(f *testing.F) {
	f.Add([]byte(`{"version":1,"time":"2026-11-27T09:42:17.000000Z","keyId":"x","treeSize":0,"root":"","heads":[],"signature":""}`))
	f.Add([]byte(`{"heads":[{"merchant":2,"seq":1,"hash":"00"},{"merchant":1}]}`))
	_, key, _ := ed25519.GenerateKey(nil)
	pub := key.Public().(ed25519.PublicKey)
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCheckpoint(b)
		if err != nil {
			return
		}
		if ps := c.Check(pub); len(ps) == 0 {
			t.Fatalf("a fuzzed checkpoint verified with a key nobody used: %s", b)
		}
	})
}

func jsonMarshal(c *Checkpoint) ([]byte, error) { return json.Marshal(c) }
