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

// TestCellWatchWaitBefore: the kill waits until the healthy cell has
// answers timed after its warm-up (a warm-up answer does not count), and
// says how many it had when it gives up.
func TestCellWatchWaitBefore(t *testing.T) {
	t0 := time.Now()
	w := &cellWatch{warm: t0.Add(time.Second)}
	w.observe(attempt{start: t0, end: t0.Add(time.Millisecond), status: 200}) // warming up
	if err := w.waitBefore(t.Context(), 1, 50*time.Millisecond); err == nil {
		t.Fatal("a warm-up answer counted as a sample before the kill")
	}
	done := make(chan error, 1)
	go func() { done <- w.waitBefore(t.Context(), 2, time.Minute) }()
	for i := range 2 {
		s := t0.Add(2*time.Second + time.Duration(i)*time.Millisecond)
		w.observe(attempt{start: s, end: s.Add(time.Millisecond), status: 200})
	}
	if err := <-done; err != nil {
		t.Fatalf("two answers after the warm-up: %v", err)
	}
}
