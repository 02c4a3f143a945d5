package reconcile_test

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
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

// fuzzFile runs a reconciliation's fuzzer: every seed with and without a
// period given (day's), then arbitrary files through run, each checked
// by checkFuzzed.
func fuzzFile(f *testing.F, day time.Time, seeds []string, run func(t *testing.T, file []byte, period reconcile.Period) (func() fuzzedReport, error)) {
	for _, seed := range seeds {
		f.Add([]byte(seed), true)
		f.Add([]byte(seed), false)
	}
	f.Fuzz(func(t *testing.T, file []byte, withPeriod bool) {
		var period reconcile.Period
		if withPeriod {
			period = reconcile.Period{From: day.Truncate(24 * time.Hour), To: day.Truncate(24 * time.Hour)}
		}
		rep, err := run(t, file, period)
		checkFuzzed(t, err, rep)
	})
}

// fakePage is a fake source's page: the entries created in [from, to)
// after the cursor, at most limit; at gives an entry's time and id, and
// whether it is on the ledger's side at all.
func fakePage[E any](entries []E, from, to time.Time, after reconcile.SettlementCursor, limit int,
	at func(*E) (time.Time, int64, bool)) []E {
	var out []E
	for i := range entries {
		ts, id, ok := at(&entries[i])
		if ok && !ts.Before(from) && ts.Before(to) && len(out) < limit &&
			(ts.After(after.CreatedAt) || (ts.Equal(after.CreatedAt) && id > after.EntryID)) {
			out = append(out, entries[i])
		}
	}
	return out
}

// fakeByID is a fake source's answer by ids: for each id in order, the
// entry whose id (idOf) it is, else unknown(id).
func fakeByID[E any](entries []E, ids []string, idOf func(*E) string, unknown func(id string) E) []E {
	out := make([]E, len(ids))
	for i, id := range ids {
		out[i] = unknown(id)
		for j := range entries {
			if id != "" && idOf(&entries[j]) == id {
				out[i] = entries[j]
			}
		}
	}
	return out
}

// categoryCase is a case of a category table test: a file, the items it
// must make by category, how many rows match, a detail one item says.
type categoryCase struct {
	name, file string
	want       map[string]int64
	matched    int64
	detail     string
}

// runCategoryCases reconciles each case's file (reconcileFile, without
// records) and checks the report (checkReportCase).
func runCategoryCases(t *testing.T, cases []categoryCase, reconcileFile func(file string) (reportCase, error)) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc, err := reconcileFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			checkReportCase(t, rc, tc.want, tc.matched, tc.detail)
		})
	}
}

// reportCase is what a category table test checks of a report.
type reportCase struct {
	categories []string // the items', in order
	details    []string
	matched    int64
	verdict    reconcile.Verdict
	writeText  func(io.Writer) error
}

// caseOf is a report's items as a reportCase.
func caseOf[I any](items []I, item func(I) (category, detail string), matched int64, v reconcile.Verdict,
	writeText func(io.Writer) error) reportCase {
	rc := reportCase{matched: matched, verdict: v, writeText: writeText}
	for _, it := range items {
		c, d := item(it)
		rc.categories, rc.details = append(rc.categories, c), append(rc.details, d)
	}
	return rc
}

// checkReportCase fails unless the report's items are want by category
// (a 0 asks for none), matched is wantMatched, the first item's detail
// holds detail, and the verdict (exit 0 without items, else 1) is the
// text report's last line.
func checkReportCase(t *testing.T, r reportCase, want map[string]int64, wantMatched int64, detail string) {
	t.Helper()
	got := map[string]int64{}
	for _, c := range r.categories {
		got[c]++
	}
	for c, n := range want {
		if got[c] != n {
			t.Fatalf("%s: %d, want %d: %v %q", c, got[c], n, r.categories, r.details)
		}
		delete(got, c)
	}
	if len(got) != 0 || r.matched != wantMatched {
		t.Fatalf("other items %v, matched %d; want %v, matched %d: %q", got, r.matched, want, wantMatched, r.details)
	}
	status := reconcile.ExitMatched
	if len(r.categories) > 0 {
		status = reconcile.ExitDiscrepancies
		if !strings.Contains(r.details[0], detail) {
			t.Errorf("detail %q, want %q", r.details[0], detail)
		}
	}
	var out strings.Builder
	if err := r.writeText(&out); err != nil || r.verdict.Status != status || !strings.HasSuffix(out.String(), r.verdict.Line()+"\n") {
		t.Errorf("verdict %+v (want exit %d), %v:\n%s", r.verdict, status, err, out.String())
	}
}
