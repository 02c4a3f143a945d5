// Package reconcile checks the books: the journal's own invariants (Audit),
// a merchant's statement against its bill, and the card network's settlement
// file against the journal. It reads through small interfaces it declares
// itself, so it does not depend on how the ledger stores anything.
package reconcile

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/paygate/gateway/internal/audit"
)

// Verifier is what Audit needs from the ledger.
type Verifier interface {
	Verify(ctx context.Context, opts audit.VerifyOptions) (*audit.Report, error)
}

var _ Verifier = (*audit.Service)(nil)

// AuditOptions configure Audit.
type AuditOptions struct {
	Merchant int64     // 0: every merchant
	JSON     bool      // the report as JSON instead of text
	Out      io.Writer // the report
	// Progress receives a progress bar when it is a terminal; otherwise
	// nothing is drawn.
	Progress io.Writer
	// Checkpoint, checked with PublicKey, is what the journal must extend.
	Checkpoint *audit.Checkpoint
	PublicKey  ed25519.PublicKey
}

// Audit runs the ledger's verification, prints a report naming each break,
// and reports whether the journal verifies.
func Audit(ctx context.Context, v Verifier, o AuditOptions) (bool, error) {
	opts := audit.VerifyOptions{Merchant: o.Merchant, Checkpoint: o.Checkpoint, PublicKey: o.PublicKey}
	bar := newProgressBar(o.Progress)
	if bar != nil {
		opts.Progress = bar.update
	}
	rep, err := v.Verify(ctx, opts)
	if bar != nil {
		bar.done()
	}
	if err != nil {
		return false, err
	}
	if o.JSON {
		enc := json.NewEncoder(o.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return false, err
		}
		return rep.OK(), nil
	}
	for _, p := range rep.Problems {
		fmt.Fprintln(o.Out, "BREAK", p.String())
	}
	if rep.ProblemsOmitted > 0 {
		fmt.Fprintf(o.Out, "… and %d more breaks\n", rep.ProblemsOmitted)
	}
	if c := rep.Checkpoint; c != nil {
		fmt.Fprintf(o.Out, "checked against the checkpoint of %s: %d heads, root %s, key %s\n",
			c.Time.UTC().Format(time.RFC3339), c.TreeSize, c.Root, c.KeyID)
	}
	verdict := "OK"
	if !rep.OK() {
		verdict = "FAILED"
	}
	fmt.Fprintf(o.Out, "%s: %d merchants, %d entries, %d postings checked in %s; %d breaks\n",
		verdict, rep.Merchants, rep.Entries, rep.Postings, rep.Elapsed, len(rep.Problems)+int(rep.ProblemsOmitted))
	return rep.OK(), nil
}
