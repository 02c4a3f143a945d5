package cellaudit

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/audit/seal"
)

// A checkpoint over cells is each cell's own checkpoint (internal/audit:
// its merchants' heads, its root, its signature, stored in the cell) and
// one signed root over the cells' roots: one file an auditor keeps, whose
// single signature commits to every cell's journal heads at that moment.
// The statement signed, after PurposeCellsCheckpoint, is three lines, as a
// cell's checkpoint's:
//
//	time <RFC 3339 UTC, microseconds>
//	tree_size <the number of cells>
//	root <the root over the cells, 64 hex digits>
//
// The tree's leaves are seal.CellLeaf(name, the cell's tree size, its
// root), in ascending cell name.
type CellsCheckpoint struct {
	Version   int              `json:"version"`
	Time      audit.Stamp      `json:"time"`
	KeyID     string           `json:"keyId"`
	TreeSize  int              `json:"treeSize"`
	Root      string           `json:"root"`
	Cells     []CellCheckpoint `json:"cells"`
	Signature string           `json:"signature"`
}

// CellCheckpoint is one cell's checkpoint in the file.
type CellCheckpoint struct {
	Cell       string            `json:"cell"`
	Checkpoint *audit.Checkpoint `json:"checkpoint"`
}

// cellsCheckpointVersion is the file's format.
const cellsCheckpointVersion = 1

// Statement is what the signature covers.
func (c *CellsCheckpoint) Statement() []byte {
	return fmt.Appendf(nil, "time %s\ntree_size %d\nroot %s\n", c.Time, c.TreeSize, c.Root)
}

// NewCellsCheckpoint signs the root over the cells' checkpoints, which
// must be in ascending cell name.
func NewCellsCheckpoint(signer *audit.Signer, cps []CellCheckpoint) (*CellsCheckpoint, error) {
	c := &CellsCheckpoint{Version: cellsCheckpointVersion, Time: audit.Stamp{Time: time.Now().UTC().Truncate(time.Microsecond)},
		KeyID: signer.KeyID(), TreeSize: len(cps), Cells: cps}
	var err error
	if c.Root, err = c.computeRoot(); err != nil {
		return nil, err
	}
	c.Signature = hex.EncodeToString(signer.Sign(seal.PurposeCellsCheckpoint, c.Statement()))
	return c, nil
}

func (c *CellsCheckpoint) computeRoot() (string, error) {
	leaves := make([][32]byte, len(c.Cells))
	for i, cc := range c.Cells {
		if i > 0 && cc.Cell <= c.Cells[i-1].Cell {
			return "", fmt.Errorf("cells are not in strictly ascending name order at cell %s", cc.Cell)
		}
		if cc.Checkpoint == nil {
			return "", fmt.Errorf("cell %s has no checkpoint", cc.Cell)
		}
		root, err := hex.DecodeString(cc.Checkpoint.Root)
		if err != nil || len(root) != 32 {
			return "", fmt.Errorf("cell %s: its root is malformed", cc.Cell)
		}
		leaves[i] = seal.LeafHash(seal.CellLeaf(cc.Cell, int64(cc.Checkpoint.TreeSize), root))
	}
	root := seal.MerkleRoot(leaves)
	return hex.EncodeToString(root[:]), nil
}

// Check verifies the file on its own with pub: each cell's checkpoint
// (its heads give its root, pub signed it), the cells' roots give the
// root, and pub signed the root. Each failure names its cell when it has
// one.
func (c *CellsCheckpoint) Check(pub ed25519.PublicKey) []Problem {
	var ps []Problem
	bad := func(cell, format string, args ...any) {
		ps = append(ps, Problem{Check: CheckCheckpoint, Cell: cell, Detail: fmt.Sprintf(format, args...)})
	}
	if c.Version != cellsCheckpointVersion {
		bad("", "cells checkpoint format version %d, this gateway reads %d", c.Version, cellsCheckpointVersion)
	}
	if c.TreeSize != len(c.Cells) {
		bad("", "tree size %d, the file lists %d cells", c.TreeSize, len(c.Cells))
	}
	for _, cc := range c.Cells {
		if cc.Checkpoint == nil {
			continue // computeRoot names it
		}
		for _, p := range cc.Checkpoint.Check(pub) {
			bad(cc.Cell, "its checkpoint: %s", p.Detail)
		}
	}
	if root, err := c.computeRoot(); err != nil {
		bad("", "%v", err)
	} else if root != c.Root {
		bad("", "the cells' roots give the root %s, the file says %s: a cell's checkpoint was changed", root, c.Root)
	}
	if id := audit.KeyID(pub); id != c.KeyID {
		bad("", "signed by key %s, the public key given is %s", c.KeyID, id)
	}
	sig, err := hex.DecodeString(c.Signature)
	if err != nil || !seal.VerifySignature(pub, seal.PurposeCellsCheckpoint, c.Statement(), sig) {
		bad("", "the signature over the cells does not verify with the public key %s", audit.KeyID(pub))
	}
	return ps
}

// For is cell name's checkpoint in the file, or nil.
func (c *CellsCheckpoint) For(name string) *audit.Checkpoint {
	for _, cc := range c.Cells {
		if cc.Cell == name {
			return cc.Checkpoint
		}
	}
	return nil
}

// ParseCellsCheckpoint reads a checkpoint file over cells.
func ParseCellsCheckpoint(b []byte) (*CellsCheckpoint, error) {
	var c CellsCheckpoint
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("not a checkpoint file over cells: %w", err)
	}
	return &c, nil
}
