package seal

import "encoding/binary"

// PurposeCellsCheckpoint is signed in front of a root over cells'
// checkpoints (internal/cells/cellaudit): a cell's own checkpoint
// signature can never be read as one over cells, nor the reverse.
const PurposeCellsCheckpoint = "paygate/cells-checkpoint/v1"

// CellLeaf encodes one cell's checkpoint as a leaf of the tree over cells
// (RFC 9162 hashing, as MerkleRoot): the cell's name, its length first (one
// byte), then the cell's tree size (8 bytes, big-endian) and its root (32
// bytes). The leaves are in ascending cell name.
func CellLeaf(name string, treeSize int64, root []byte) []byte {
	b := make([]byte, 0, 1+len(name)+8+len(root))
	b = append(append(b, byte(len(name))), name...)
	b = binary.BigEndian.AppendUint64(b, uint64(treeSize))
	return append(b, root...)
}
