package bill_test

import (
	"testing"
	"time"

	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/postings"
)

func day(t *testing.T, s string) time.Time {
	t.Helper()
	d, err := postings.ParseDay("day", s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A report's days are the zone's midnights: a DST day is 23 or 25 hours,
// consecutive days tile, and UTC is the default.
func TestPeriodDayBoundaries(t *testing.T) {
	for _, tc := range []struct {
		zone, start, end string
		from             string // RFC 3339 with the zone's offset
		hours            float64
	}{
		{"", "2031-03-30", "2031-03-30", "2031-03-30T00:00:00Z", 24},
		{"UTC", "2031-01-01", "2031-01-31", "2031-01-01T00:00:00Z", 31 * 24},
		{"Europe/Paris", "2031-03-30", "2031-03-30", "2031-03-30T00:00:00+01:00", 23}, // spring forward
		{"Europe/Paris", "2031-10-26", "2031-10-26", "2031-10-26T00:00:00+02:00", 25}, // fall back
		{"America/New_York", "2031-03-09", "2031-03-09", "2031-03-09T00:00:00-05:00", 23},
		{"America/New_York", "2031-11-02", "2031-11-02", "2031-11-02T00:00:00-04:00", 25},
		{"Asia/Kolkata", "2031-03-30", "2031-03-31", "2031-03-30T00:00:00+05:30", 48},
		// Santiago skips midnight itself (00:00 → 01:00 on the first Sunday
		// of September): the day starts at 01:00 and is 23 hours.
		{"America/Santiago", "2031-09-07", "2031-09-07", "2031-09-07T01:00:00-03:00", 23},
	} {
		zone, err := bill.ParseTimeZone("timeZone", tc.zone)
		if err != nil {
			t.Fatalf("%s: %v", tc.zone, err)
		}
		p, err := bill.NewPeriod(day(t, tc.start), day(t, tc.end), zone)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.From().Format(time.RFC3339); got != tc.from {
			t.Errorf("%s %s: from %s, want %s", tc.zone, tc.start, got, tc.from)
		}
		if got := p.To().Sub(p.From()).Hours(); got != tc.hours {
			t.Errorf("%s %s..%s: %v hours, want %v", tc.zone, tc.start, tc.end, got, tc.hours)
		}
		next, _ := bill.NewPeriod(day(t, tc.end).AddDate(0, 0, 1), day(t, tc.end).AddDate(0, 0, 1), zone)
		if !next.From().Equal(p.To()) {
			t.Errorf("%s: the next day starts at %s, not where this period ends (%s)", tc.zone, next.From(), p.To())
		}
	}
}

// A time zone is refused at the door, naming timeZone: unknown names,
// control characters, paths, the machine's own zone.
func TestParseTimeZoneRefusals(t *testing.T) {
	for _, s := range []string{"Mars/Olympus", "Europe/Paris\x00", "Europe/Paris\n", "\x7f", "../../etc/passwd",
		"/etc/localtime", "Local", "Europe/Pa ris", "Europe\\Paris", "Europe/Paris;drop", "é",
		"A/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"} {
		_, err := bill.ParseTimeZone("timeZone", s)
		e, ok := err.(*postings.Error)
		if !ok || e.Code != postings.EINVALID || e.Field != "timeZone" {
			t.Errorf("%q: %v, want EINVALID naming timeZone", s, err)
		}
	}
	for _, s := range []string{"UTC", "Europe/Paris", "America/Argentina/Buenos_Aires", "Etc/GMT+5", "Asia/Kolkata"} {
		if _, err := bill.ParseTimeZone("timeZone", s); err != nil {
			t.Errorf("%q refused: %v", s, err)
		}
	}
}

// A period is at most ReportDaysMax days, and ends on or after its start.
func TestNewPeriodBounds(t *testing.T) {
	for _, tc := range []struct {
		start, end string
		ok         bool
	}{
		{"2031-01-01", "2031-01-01", true},
		{"2032-01-01", "2032-12-31", true}, // 366 days, a leap year
		{"2031-01-01", "2032-01-01", true}, // 366 days
		{"2031-01-01", "2032-01-02", false},
		{"2031-01-02", "2031-01-01", false},
	} {
		_, err := bill.NewPeriod(day(t, tc.start), day(t, tc.end), nil)
		if (err == nil) != tc.ok {
			t.Errorf("%s..%s: %v", tc.start, tc.end, err)
		}
		if e, ok := err.(*postings.Error); err != nil && (!ok || e.Field != "endDate") {
			t.Errorf("%s..%s: %v does not name endDate", tc.start, tc.end, err)
		}
	}
}

// FuzzParseTimeZone: no input panics; what is accepted is a zone the
// database knows, named only with the characters of IANA names, never the
// machine's own; what is refused names timeZone.
func FuzzParseTimeZone(f *testing.F) {
	for _, s := range []string{"", "UTC", "Europe/Paris", "Local", "../etc", "Etc/GMT+5", "\x00", "America/Argentina/Buenos_Aires", "Europe/Paris\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		loc, err := bill.ParseTimeZone("timeZone", s)
		if err != nil {
			if e, ok := err.(*postings.Error); !ok || e.Field != "timeZone" {
				t.Fatalf("%q: %v does not name timeZone", s, err)
			}
			return
		}
		if s == "" {
			if loc != time.UTC {
				t.Fatalf("empty: %v, want UTC", loc)
			}
			return
		}
		if loc == nil || loc == time.Local || loc.String() != s || len(s) > 64 {
			t.Fatalf("%q accepted as %v", s, loc)
		}
		for _, c := range []byte(s) {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '/' || c == '_' || c == '-' || c == '+') {
				t.Fatalf("%q accepted with byte %q", s, c)
			}
		}
	})
}
