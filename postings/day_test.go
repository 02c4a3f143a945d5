package postings

import (
	"testing"
	"time"
)

func TestParseDay(t *testing.T) {
	for _, tt := range []struct {
		give string
		want string // the day as parsed, or the message
	}{
		{"1970-01-01", "1970-01-01"},
		{"2024-02-29", "2024-02-29"},
		{"2000-02-29", "2000-02-29"},
		{"2025-12-31", "2025-12-31"},
		{"9999-12-31", "9999-12-31"},
		{"1969-12-31", "d: must be a day from 1970-01-01 to 9999-12-31"},
		{"0001-01-01", "d: must be a day from 1970-01-01 to 9999-12-31"},
		{"0000-01-01", "d: must be a day from 1970-01-01 to 9999-12-31"},
		{"2025-02-29", "d: must be a date YYYY-MM-DD"},
		{"2024-02-30", "d: must be a date YYYY-MM-DD"},
		{"1900-02-29", "d: must be a date YYYY-MM-DD"},
		{"2025-04-31", "d: must be a date YYYY-MM-DD"},
		{"2025-13-01", "d: must be a date YYYY-MM-DD"},
		{"2025-00-10", "d: must be a date YYYY-MM-DD"},
		{"2025-01-00", "d: must be a date YYYY-MM-DD"},
		{"10000-01-01", "d: must be a date YYYY-MM-DD"},
		{"99999-12-31", "d: must be a date YYYY-MM-DD"},
		{"-0001-01-01", "d: must be a date YYYY-MM-DD"},
		{"+2025-01-01", "d: must be a date YYYY-MM-DD"},
		{"2025-1-1", "d: must be a date YYYY-MM-DD"},
		{"2025-01-01T00:00:00Z", "d: must be a date YYYY-MM-DD"},
		{"2025-01-01 ", "d: must be a date YYYY-MM-DD"},
		{"２０２５-01-01", "d: must be a date YYYY-MM-DD"},
		{"", "d: must be a date YYYY-MM-DD"},
	} {
		d, err := ParseDay("d", tt.give)
		got := d.Format(DayLayout)
		if err != nil {
			e := AsError(err)
			got = e.Field + ": " + e.Message
		} else if d.Location() != time.UTC || d.Hour() != 0 {
			t.Errorf("%q: %v is not a UTC day", tt.give, d)
		}
		if got != tt.want {
			t.Errorf("%q: got %q, want %q", tt.give, got, tt.want)
		}
	}
}

// FuzzParseDay: an accepted day is in range and writes back as given.
func FuzzParseDay(f *testing.F) {
	for _, s := range []string{"2025-01-01", "0000-01-01", "9999-12-31", "2024-02-29", "2025-02-29", "10000-01-01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDay("d", s)
		if err != nil {
			if e := AsError(err); e.Code != EINVALID || e.Field != "d" {
				t.Fatalf("%q: %#v", s, e)
			}
			return
		}
		if d.Before(DayMin) || d.After(DayMax) || d.Format(DayLayout) != s {
			t.Fatalf("accepted %q as %v", s, d)
		}
	})
}
