package main

import (
	"testing"
	"time"
)

// DATABASE_READ_WAIT_MS is refused when set, not when used: an integer of
// milliseconds from 0 to readWaitMsMax; unset gives the command's default,
// 0 means "do not wait" (negative for the ledger).
func TestParseReadWait(t *testing.T) {
	def := 5 * time.Second
	cases := []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{"", def, false},
		{"  ", def, false},
		{"0", -1, false},
		{"1", time.Millisecond, false},
		{"250", 250 * time.Millisecond, false},
		{"10000", 10 * time.Second, false},
		{"10001", 0, true},
		{"-1", 0, true},
		{"1.5", 0, true},
		{"250ms", 0, true},
		{"99999999999999999999", 0, true},
		{"２５０", 0, true}, // full-width digits
	}
	for _, c := range cases {
		got, err := parseReadWait(c.in, def)
		if (err != nil) != c.bad {
			t.Errorf("%q: error %v, want error %v", c.in, err, c.bad)
			continue
		}
		if !c.bad && got != c.want {
			t.Errorf("%q: %s, want %s", c.in, got, c.want)
		}
	}
}
