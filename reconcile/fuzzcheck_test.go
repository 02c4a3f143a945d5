package reconcile_test

import (
	"bytes"
	"io"
	"testing"
	"unicode/utf8"

	"github.com/paygate/gateway/reconcile"
)

// fuzzedReport is what every reconciliation fuzzer checks of a report.
type fuzzedReport struct {
	rows, counted, toAct int64 // the file's rows; the rows its categories count; all but matched
	verdict              reconcile.Verdict
	counts               any
	writeText            func(io.Writer) error
}

// checkFuzzed fails unless err is a UTF-8 *FileError (the input refused,
// exit status 2) or the report counts every row in exactly one category,
// its verdict agrees with the counts and its text is UTF-8: no byte of the
// file reaches it raw.
func checkFuzzed(t *testing.T, err error, rep func() fuzzedReport) {
	t.Helper()
	if err != nil {
		if !reconcile.IsUnusable(err) || !utf8.ValidString(err.Error()) {
			t.Fatalf("refusal %q: want a UTF-8 FileError", err)
		}
		return
	}
	r := rep()
	if r.counted != r.rows {
		t.Fatalf("%d rows, counted %d: %+v", r.rows, r.counted, r.counts)
	}
	if (r.verdict.Status == reconcile.ExitMatched) != (r.toAct == 0) || r.verdict.Status == reconcile.ExitUnusable {
		t.Fatalf("verdict %+v with counts %+v", r.verdict, r.counts)
	}
	var out bytes.Buffer
	if err := r.writeText(&out); err != nil || !utf8.Valid(out.Bytes()) {
		t.Fatalf("text report %v, UTF-8 %v", err, utf8.Valid(out.Bytes()))
	}
}
