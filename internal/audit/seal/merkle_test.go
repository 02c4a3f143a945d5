package seal

import (
	"crypto/sha256"
	"testing"
)

// The root is RFC 9162's MTH: computed here by hand for 0 to 5 leaves,
// where the split at the largest power of two below n matters (5 = 4 + 1,
// 3 = 2 + 1), and compared with MerkleRoot.
func TestMerkleRootIsRFC9162(t *testing.T) {
	t.Parallel()
	l := make([][32]byte, 5)
	for i := range l {
		l[i] = LeafHash([]byte{byte(i)})
	}
	n := NodeHash
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
		if got := MerkleRoot(l[:tc.leaves]); got != tc.want {
			t.Errorf("%d leaves: %x, want %x", tc.leaves, got, tc.want)
		}
	}
	// The domain separation: a leaf's hash is not the plain hash of it.
	if LeafHash([]byte("x")) == sha256.Sum256([]byte("x")) {
		t.Error("leaf hash without its 0x00 prefix")
	}
}
