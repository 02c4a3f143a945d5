package main

import (
	"errors"
	"testing"
	"time"
)

// TestCellWatch: the healthy cell's attempts are errors unless answered
// 2xx, and their latencies fall before the fault, after it (started after
// it, ended before the failed cell's load ended), or nowhere.
func TestCellWatch(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	w := &cellWatch{warm: at(1)}
	w.setFault(at(10))
	w.setEnd(at(20))
	for _, a := range []attempt{
		{start: at(1), end: at(1.01), status: 200},                     // before: 10 ms
		{start: at(9.99), end: at(10.02), status: 200},                 // across the fault: neither
		{start: at(11), end: at(11.05), status: 200},                   // after: 50 ms
		{start: at(19.99), end: at(20.5), status: 200},                 // past the end: neither
		{start: at(12), end: at(12.1), status: 503},                    // an error
		{start: at(13), end: at(13.1), transport: errors.New("reset")}, // an error
		{start: at(2), end: at(2.1), status: 404},                      // an error
		{start: at(0.5), end: at(0.9), status: 200},                    // warming up: neither
		{start: at(0.5), end: at(0.9), status: 502},                    // warming up, still an error
	} {
		w.observe(a)
	}
	f := w.figures()
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"errors", f.errors, 4},
		{"before", f.before, 1},
		{"after", f.after, 1},
		{"p99 before", f.p99Before, 10 * time.Millisecond},
		{"p99 after", f.p99After, 50 * time.Millisecond},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestCellsLatencyWithin: twice the p99 before, or 50 ms more, is noise.
func TestCellsLatencyWithin(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		before, after time.Duration
		want          bool
	}{
		{100 * ms, 200 * ms, true},
		{100 * ms, 201 * ms, false},
		{20 * ms, 70 * ms, true},
		{20 * ms, 71 * ms, false},
		{100 * ms, 3 * time.Second, false},
	} {
		if got := cellsLatencyWithin(c.before, c.after); got != c.want {
			t.Errorf("before %s, after %s: %v, want %v", c.before, c.after, got, c.want)
		}
	}
}

// TestCellWatchWarmsUpByAnswers: with warmAnswers, the warm-up ends at
// the end of that many answers, whenever they come; an attempt begun
// before is not timed, one begun after is, before the fault.
func TestCellWatchWarmsUpByAnswers(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	w := &cellWatch{warmAnswers: 2}
	for _, a := range []attempt{
		{start: at(0), end: at(5), status: 200},     // 1st answer: warming up
		{start: at(1), end: at(6), status: 200},     // 2nd: the warm-up ends at 6
		{start: at(5.5), end: at(6.5), status: 200}, // begun before 6: not timed
		{start: at(7), end: at(7.1), status: 200},   // timed
	} {
		w.observe(a)
	}
	if n := w.timedBefore(); n != 1 {
		t.Fatalf("%d answers timed before the fault, want 1", n)
	}
}
