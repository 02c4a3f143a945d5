package host

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/paygate/gateway/postings"
)

func TestSafeValue(t *testing.T) {
	long := strings.Repeat("a", 300)
	for _, c := range []struct {
		in       string
		max      int
		want     string // the whole value, or its start before the hash
		verbatim bool
	}{
		{"statement.csv", 200, "statement.csv", true},
		{"", 200, "", true},
		{"a\xffb.csv", 200, `a\xFFb.csv [sha256 `, false},
		{"a\x00b", 200, `a\u{0000}b [sha256 `, false},
		{"evil\u202ecod.exe", 200, `evil\u{202E}cod.exe [sha256 `, false},
		{`back\slash` + "\x00", 200, `back\\slash\u{0000} [sha256 `, false},
		{long, 200, strings.Repeat("a", 200-74) + " [sha256 ", false},
	} {
		got := SafeValue(c.in, c.max)
		if c.verbatim && got != c.want || !c.verbatim && !strings.HasPrefix(got, c.want) {
			t.Errorf("SafeValue(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
		if err := postings.CheckText("v", got, c.max); err != nil {
			t.Errorf("SafeValue(%q, %d) = %q, which the trail would refuse: %v", c.in, c.max, got, err)
		}
	}
}

// FuzzSafeValue: whatever was sent, the trail can hold what SafeValue
// makes of it within the bound, and text that was fine is kept as it is.
func FuzzSafeValue(f *testing.F) {
	for _, s := range []string{"", "plain.csv", "a\xffb", "\x00", "\u202e", `\`, strings.Repeat("é", 150)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, max := range []int{AuditTargetMax, AuditDetailMax, 100} {
			got := SafeValue(v, max)
			if utf8.RuneCountInString(got) > max {
				t.Fatalf("SafeValue(%q, %d) is %d characters", v, max, utf8.RuneCountInString(got))
			}
			if err := postings.CheckText("v", got, max); err != nil {
				t.Fatalf("SafeValue(%q, %d) = %q: %v", v, max, got, err)
			}
			if postings.CheckText("v", v, max) == nil && got != v {
				t.Fatalf("SafeValue(%q, %d) changed acceptable text to %q", v, max, got)
			}
		}
	})
}

func TestQueryIntAndParseDays(t *testing.T) {
	now := time.Date(2026, 3, 10, 15, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		query string
		field string // the field a refusal names; "" for none
	}{
		{"", ""},
		{"startDate=2026-01-01&endDate=2026-01-31", ""},
		{"startDate=2025-01-01&endDate=2026-01-01", ""}, // 366 days, both included
		{"startDate=2025-01-01&endDate=2026-01-02", "endDate"},
		{"startDate=2026-02-01&endDate=2026-01-01", "endDate"},
		{"startDate=2026-01-01&startDate=2026-01-02&endDate=2026-01-03", "startDate"},
		{"startDate=2026-13-01&endDate=2026-01-03", "startDate"},
		{"startDate=2026-01-01", "endDate"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/x?"+c.query, nil)
		_, _, err := ParseDays(r, now, 7)
		if got := postings.AsError(err); (err == nil) != (c.field == "") || err != nil && got.Field != c.field {
			t.Errorf("ParseDays(%s): %v, want a refusal naming %q", c.query, err, c.field)
		}
	}
	r := httptest.NewRequest(http.MethodGet, "/x", nil)
	if s, e, err := ParseDays(r, now, 7); err != nil || e.Format("2006-01-02") != "2026-03-10" || s.Format("2006-01-02") != "2026-03-04" {
		t.Errorf("ParseDays without dates: %v %v %v, want the last 7 days to 2026-03-10", s, e, err)
	}
	for q, want := range map[string]int{"": 5, "n=1": 1, "n=10": 10, "n=0": -1, "n=11": -1, "n=+3": -1, "n=-1": -1, "n=x": -1, "n=0000000003": -1, "n=03": -1} {
		n, err := QueryInt(httptest.NewRequest(http.MethodGet, "/x?"+q, nil), "n", 1, 10, 5)
		if want < 0 && (err == nil || postings.AsError(err).Field != "n") || want >= 0 && (err != nil || n != want) {
			t.Errorf("QueryInt(%q) = %d, %v; want %d", q, n, err, want)
		}
	}
	// An id of a cell (n × 10¹²) pages as well as one of today's.
	for q, want := range map[string]int{"n=2000000000042": 2000000000042, "n=4611686018427387904": 1 << 62, "n=4611686018427387905": -1, "n=99999999999999999999": -1} {
		n, err := QueryInt(httptest.NewRequest(http.MethodGet, "/x?"+q, nil), "n", 0, 1<<62, 0)
		if want < 0 && err == nil || want >= 0 && (err != nil || n != want) {
			t.Errorf("QueryInt(%q, up to 2^62) = %d, %v; want %d", q, n, err, want)
		}
	}
}
