package seal

import (
	"crypto/sha256"
	"encoding/binary"
)

// The checkpoint's root is a Merkle tree over the merchants' heads in the
// style of RFC 9162 (Certificate Transparency 2.0, section 2.1.1): a leaf's
// hash is SHA-256(0x00 || leaf), a node's SHA-256(0x01 || left || right),
// the tree of n > 1 leaves splits at the largest power of two below n, and
// the tree of no leaf is SHA-256 of nothing. The leaves are the heads in
// ascending merchant id, each 48 bytes:
//
//	merchant id  8 bytes, big-endian, signed
//	last_seq     8 bytes, big-endian, signed
//	last_hash    32 bytes
//
// A tree (rather than one hash over the list) lets a single merchant be
// shown its head is in a checkpoint with log2(n) hashes, without the
// others' heads.

// HeadLeaf encodes one head as a leaf.
func HeadLeaf(merchant, seq int64, hash []byte) []byte {
	b := make([]byte, 16, 48)
	binary.BigEndian.PutUint64(b[0:8], uint64(merchant))
	binary.BigEndian.PutUint64(b[8:16], uint64(seq))
	return append(b, hash...)
}

// LeafHash is a leaf's hash, SHA-256(0x00 || leaf).
func LeafHash(leaf []byte) [32]byte {
	return sha256.Sum256(append([]byte{0x00}, leaf...))
}

// NodeHash is a node's hash, SHA-256(0x01 || left || right).
func NodeHash(left, right [32]byte) [32]byte {
	b := make([]byte, 0, 65)
	b = append(append(append(b, 0x01), left[:]...), right[:]...)
	return sha256.Sum256(b)
}

// MerkleRoot is RFC 9162's MTH over the leaves' hashes.
func MerkleRoot(leaves [][32]byte) [32]byte {
	switch n := len(leaves); n {
	case 0:
		return sha256.Sum256(nil)
	case 1:
		return leaves[0]
	default:
		k := 1
		for k*2 < n {
			k *= 2
		}
		return NodeHash(MerkleRoot(leaves[:k]), MerkleRoot(leaves[k:]))
	}
}
