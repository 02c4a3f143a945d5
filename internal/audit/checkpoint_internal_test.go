package audit

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"
)

// The root is RFC 9162's MTH: computed here by hand for 0 to 5 leaves,
// where the split at the largest power of two below n matters (5 = 4 + 1,
// 3 = 2 + 1), and compared with merkleRoot.
func TestMerkleRootIsRFC9162(t *testing.T) {
	t.Parallel()
	l := make([][32]byte, 5)
	for i := range l {
		l[i] = leafHash([]byte{byte(i)})
	}
	n := nodeHash
	cases := []struct {
		leaves int
		want   [32]byte
	}{
		{0, sha256.Sum256(nil)},
		{1, l[0]},
		{2, n(l[0], l[1])},
		{3, n(n(l[0], l[1]), l[2])},
		{4, n(n(l[0], l[1]), n(l[2], l[3]))},
		{5, n(n(n(l[0], l[1]), n(l[2], l[3])), l[4])},
	}
	for _, tc := range cases {
		if got := merkleRoot(l[:tc.leaves]); got != tc.want {
			t.Errorf("%d leaves: %x, want %x", tc.leaves, got, tc.want)
		}
	}
	// The domain separation: a leaf's hash is not the plain hash of it.
	if leafHash([]byte("x")) == sha256.Sum256([]byte("x")) {
		t.Error("leaf hash without its 0x00 prefix")
	}
}

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
