package reconcile

import (
	"errors"
	"fmt"
)

// The outcome of a reconciliation, the one home of its words and exit
// statuses: the CLI exits with Status and prints Line last, the console
// shows the same Line and Status. Card clearings use it now; the later
// reconciliations (refunds from the network, the rail's remittance
// settlement report, bank statements) are to report through it too.
const (
	ExitMatched       = 0 // every row matched and the ledger lacks nothing
	ExitDiscrepancies = 1 // at least one row or ledger item needs a person
	ExitUnusable      = 2 // the input cannot be reconciled at all (a *FileError, a usage error)
)

// The verdicts' first words.
const (
	VerdictMatched       = "MATCHED"
	VerdictDiscrepancies = "DISCREPANCIES"
	VerdictUnusable      = "UNUSABLE"
)

// Verdict is how a reconciliation ended.
type Verdict struct {
	Status int    `json:"exitStatus"`
	Word   string `json:"verdict"`
	Text   string `json:"text"`
}

// Line is the verdict as the report's last line.
func (v Verdict) Line() string {
	return fmt.Sprintf("%s: %s (exit status %d)", v.Word, v.Text, v.Status)
}

func matchedVerdict(text string) Verdict {
	return Verdict{Status: ExitMatched, Word: VerdictMatched, Text: text}
}

func discrepanciesVerdict(toAct, checked int64) Verdict {
	return Verdict{Status: ExitDiscrepancies, Word: VerdictDiscrepancies,
		Text: fmt.Sprintf("%d of %d rows and ledger items need attention", toAct, checked)}
}

// UnusableVerdict is the verdict on input that cannot be reconciled: a
// *FileError's message (its line included), never the file's bytes.
func UnusableVerdict(err error) Verdict {
	return Verdict{Status: ExitUnusable, Word: VerdictUnusable, Text: err.Error()}
}

// IsUnusable reports whether err is the input's fault (exit status 2) rather
// than the ledger's or the machine's.
func IsUnusable(err error) bool {
	var fe *FileError
	return errors.As(err, &fe)
}
