package main

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// cellWatch watches the cell that is not failed (cells.go): every attempt
// of its merchants, whether it got a 2xx answer, and its latency before
// the fault and after it (until the failed cell's load ended). Attempts
// begun before warm are errors if they fail but no latency: the first
// answers open every connection (TLS, PostgreSQL sessions, cold caches)
// and would flatter "before". With warmAnswers set, warm is when that
// many answers have come, so that the warm-up follows the machine's pace
// (a fixed time was the whole load on a quiet machine and none of it on
// a loaded one).
type cellWatch struct {
	mu            sync.Mutex
	warm          time.Time
	warmAnswers   int // answers that end the warm-up (0: warm is set)
	answers       int
	fault, end    time.Time
	before, after []time.Duration
	errors        int
	firstError    string
}

func (w *cellWatch) setFault(t time.Time) {
	w.mu.Lock()
	w.fault = t
	w.mu.Unlock()
}

func (w *cellWatch) setEnd(t time.Time) {
	w.mu.Lock()
	w.end = t
	w.mu.Unlock()
}

func (w *cellWatch) observe(a attempt) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if a.transport != nil || a.status < 200 || a.status > 299 {
		w.errors++
		if w.firstError == "" {
			w.firstError = fmt.Sprintf("HTTP %d, %v, at %s", a.status, a.transport, a.end.Format("15:04:05.000"))
		}
		return
	}
	w.answers++
	if w.warm.IsZero() && w.warmAnswers > 0 && w.answers >= w.warmAnswers {
		w.warm = a.end
	}
	switch {
	case w.warm.IsZero() || a.start.Before(w.warm):
	case w.fault.IsZero() || a.end.Before(w.fault):
		w.before = append(w.before, a.end.Sub(a.start))
	case !a.start.Before(w.fault) && (w.end.IsZero() || !a.end.After(w.end)):
		w.after = append(w.after, a.end.Sub(a.start))
	}
}

// timedBefore is how many answers were timed before the fault.
func (w *cellWatch) timedBefore() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.before)
}

// watchFigures are what cellWatch saw.
type watchFigures struct {
	errors               int
	firstError           string
	before, after        int
	p50Before, p99Before time.Duration
	p50After, p99After   time.Duration
}

func (w *cellWatch) figures() watchFigures {
	w.mu.Lock()
	defer w.mu.Unlock()
	f := watchFigures{errors: w.errors, firstError: w.firstError, before: len(w.before), after: len(w.after)}
	f.p50Before, f.p99Before = quantile(w.before, 0.50), quantile(w.before, 0.99)
	f.p50After, f.p99After = quantile(w.after, 0.50), quantile(w.after, 0.99)
	return f
}

// quantile of a sample (0 when empty).
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}
