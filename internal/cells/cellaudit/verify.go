package cellaudit

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/cells"
)

// Verifier is one cell opened for verify: its name, the database the
// cross-cell reads use, and its own audit (on its standby where one is
// set: internal/audit reads through the ledger's read route).
type Verifier struct {
	Cell
	Audit *audit.Service
}

// Report is `audit verify` over cells: each cell's own report, the
// problems across cells, the operator data's digests and the totals.
type Report struct {
	OK           bool                 `json:"ok"`
	Cells        []CellReport         `json:"cells"`
	Problems     []Problem            `json:"problems"` // across cells; never nil
	OperatorData []TableDigest        `json:"operatorData"`
	Totals       Totals               `json:"totals"`
	Checkpoint   *audit.CheckpointRef `json:"checkpoint,omitempty"` // the root over cells checked against
}

// CellReport is one cell's own verify.
type CellReport struct {
	Cell   string        `json:"cell"`
	Report *audit.Report `json:"report"`
}

// Totals add up the cells' reports; DirectoryMerchants is the directory's
// count (a merchant in the middle of a move is counted in both its cells).
type Totals struct {
	Cells              int   `json:"cells"`
	DirectoryMerchants int   `json:"directoryMerchants"`
	Merchants          int64 `json:"merchants"`
	Entries            int64 `json:"entries"`
	Postings           int64 `json:"postings"`
}

// Verify runs each cell's verify (against its part of cp when cp is
// given, checked with pub), then the directory's and the operator data's
// checks across the cells. dir is the directory (the home cell's).
func Verify(ctx context.Context, dir *cells.Directory, vs []Verifier, cp *CellsCheckpoint, pub ed25519.PublicKey) (*Report, error) {
	rep := &Report{Problems: []Problem{}}
	cs := make([]Cell, len(vs))
	for i, v := range vs {
		cs[i] = v.Cell
		// The cell is the one its name says, its merchant ids in its range.
		if id, err := cells.Check(ctx, v.DB, v.Name); err != nil {
			rep.Problems = append(rep.Problems, Problem{Check: CheckIdentity, Cell: v.Name, Detail: err.Error()})
		} else {
			ps, err := strangers(ctx, v.DB, v.Name, id.Number)
			if err != nil {
				return nil, err
			}
			rep.Problems = append(rep.Problems, ps...)
		}
		opts := audit.VerifyOptions{PublicKey: pub}
		if cp != nil {
			opts.Checkpoint = cp.For(v.Name)
		}
		r, err := v.Audit.Verify(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("cell %s: %w", v.Name, err)
		}
		rep.Cells = append(rep.Cells, CellReport{Cell: v.Name, Report: r})
		rep.Totals.Merchants += r.Merchants
		rep.Totals.Entries += r.Entries
		rep.Totals.Postings += r.Postings
	}
	rep.Totals.Cells = len(vs)
	if cp != nil {
		rep.Problems = append(rep.Problems, cp.Check(pub)...)
		rep.Problems = append(rep.Problems, cp.unverified(cs)...)
		rep.Checkpoint = &audit.CheckpointRef{Time: cp.Time.Time, KeyID: cp.KeyID, TreeSize: cp.TreeSize, Root: cp.Root}
	}
	entries, err := dir.All(ctx)
	if err != nil {
		return nil, fmt.Errorf("the directory: %w", err)
	}
	rep.Totals.DirectoryMerchants = len(entries)
	ps, err := Directory(ctx, entries, cs)
	if err != nil {
		return nil, err
	}
	rep.Problems = append(rep.Problems, ps...)
	if rep.OperatorData, ps, err = OperatorData(ctx, cs); err != nil {
		return nil, err
	}
	rep.Problems = append(rep.Problems, ps...)
	rep.OK = len(rep.Problems) == 0
	for _, c := range rep.Cells {
		rep.OK = rep.OK && c.Report.OK()
	}
	return rep, nil
}

// unverified names each cell of the checkpoint that is not among those
// verified: a cell left out of GATEWAY_CELLS would escape the comparison.
// (A cell verified that the checkpoint lacks is newer than it: fine.)
func (c *CellsCheckpoint) unverified(cs []Cell) []Problem {
	var ps []Problem
	for _, cc := range c.Cells {
		found := false
		for _, have := range cs {
			found = found || have.Name == cc.Cell
		}
		if !found {
			ps = append(ps, Problem{Check: CheckCheckpoint, Cell: cc.Cell,
				Detail: "the checkpoint has cell " + cc.Cell + ", which was not verified: name every cell"})
		}
	}
	return ps
}

// Print writes the report: JSON, or each cell's breaks and verdict, the
// breaks across cells, and the totals.
func (rep *Report) Print(w io.Writer, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	for _, c := range rep.Cells {
		r := c.Report
		for _, p := range r.Problems {
			fmt.Fprintf(w, "BREAK cell=%s %s\n", c.Cell, p.String())
		}
		if r.ProblemsOmitted > 0 {
			fmt.Fprintf(w, "… and %d more breaks in cell %s\n", r.ProblemsOmitted, c.Cell)
		}
		fmt.Fprintf(w, "cell %s: %s: %d merchants, %d entries, %d postings checked in %s\n",
			c.Cell, verdict(r.OK()), r.Merchants, r.Entries, r.Postings, r.Elapsed)
	}
	for _, p := range rep.Problems {
		fmt.Fprintln(w, "BREAK", p.String())
	}
	if c := rep.Checkpoint; c != nil {
		fmt.Fprintf(w, "checked against the checkpoint over %d cells of %s, root %s, key %s\n",
			c.TreeSize, c.Time.UTC().Format(time.RFC3339), c.Root, c.KeyID)
	}
	t := rep.Totals
	_, err := fmt.Fprintf(w, "%s over %d cells: %d merchants (%d in the directory), %d entries, %d postings; %d breaks across cells\n",
		verdict(rep.OK), t.Cells, t.Merchants, t.DirectoryMerchants, t.Entries, t.Postings, len(rep.Problems))
	return err
}

func verdict(ok bool) string {
	if ok {
		return "OK"
	}
	return "FAILED"
}

// Checkpoint signs and stores each cell's own checkpoint, in ascending
// cell name, and signs the root over them. A cell that fails stops it: a
// file without a cell would let that cell's history go unchecked (the
// cells done keep their stored checkpoints, each a true statement).
func Checkpoint(ctx context.Context, vs []Verifier, signer *audit.Signer) (*CellsCheckpoint, error) {
	sorted := append([]Verifier(nil), vs...)
	slices.SortFunc(sorted, func(a, b Verifier) int { return strings.Compare(a.Name, b.Name) })
	var cps []CellCheckpoint
	for _, v := range sorted {
		c, err := v.Audit.Checkpoint(ctx, signer)
		if err != nil {
			return nil, fmt.Errorf("cell %s: %w (no file written; the cells before it stored their own checkpoints)", v.Name, err)
		}
		cps = append(cps, CellCheckpoint{Cell: v.Name, Checkpoint: c})
	}
	return NewCellsCheckpoint(signer, cps)
}
