// Package cellaudit is audit verify's part over several cells
// (docs/scaling.md, "audit verify over all cells"): what no one cell can
// check alone. Each cell's own journal is internal/audit's Verify, run per
// cell by cmd/gateway; this package compares the cells with each other and
// with the directory: every merchant in its cell and in no other, every
// tombstone's hash on its merchant's chain in its new cell, no shop
// number, merchant id or PAN fingerprint in two cells, the operator's data
// the same everywhere. It only reads.
package cellaudit

import "github.com/uptrace/bun"

// Cell is one cell's name and database (its standby where one is set:
// every read here is of one statement's snapshot).
type Cell struct {
	Name string
	DB   bun.IDB
}

// Problem is one break found across cells, naming the cells concerned.
type Problem struct {
	Check  string `json:"check"`
	Cell   string `json:"cell,omitempty"`   // the cell the problem was found in, when one
	Shop   string `json:"shopNo,omitempty"` // the merchant, when it is about one
	Table  string `json:"table,omitempty"`  // the operator table, for CheckOperatorData
	Detail string `json:"detail"`
}

func (p Problem) String() string {
	s := p.Check
	if p.Cell != "" {
		s += " cell=" + p.Cell
	}
	if p.Shop != "" {
		s += " shop=" + p.Shop
	}
	if p.Table != "" {
		s += " table=" + p.Table
	}
	return s + ": " + p.Detail
}

// The checks.
const (
	CheckIdentity     = "identity"      // a cell's database is not that cell, or holds merchant ids outside its range (cells.Check)
	CheckOperatorData = "operator_data" // a BIN, rate or sanctions entry differs between cells
	CheckPlacement    = "placement"     // a merchant not where the directory places it, or unplaced
	CheckDuplicate    = "duplicate"     // a shop number, merchant id or PAN fingerprint in two cells
	CheckTombstone    = "tombstone"     // a tombstone's last hash is not its merchant's chain in its new cell
	CheckCheckpoint   = "checkpoint"    // the checkpoint over cells does not verify, or a cell does not extend its part
)
