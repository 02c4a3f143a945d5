package delivery

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/testseed"
)

func TestBackoffScheduleAndJitter(t *testing.T) {
	rnd := rand.New(rand.NewPCG(testseed.Seed(t, "./internal/delivery", "delivery.seed", 1), 2))
	bases := []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute,
		30 * time.Minute, time.Hour, 2 * time.Hour, 4 * time.Hour, 4 * time.Hour, 4 * time.Hour, 4 * time.Hour}
	var prevMax time.Duration
	for i, base := range bases {
		attempt := i + 1
		lo, hi := time.Duration(float64(base)*0.8), time.Duration(float64(base)*1.2)
		minD, maxD := time.Duration(1<<62), time.Duration(0)
		var sum time.Duration
		const n = 2000
		for range n {
			d := Backoff(attempt, rnd)
			if d < lo || d >= hi {
				t.Fatalf("Backoff(%d) = %v, outside [%v, %v)", attempt, d, lo, hi)
			}
			minD, maxD, sum = min(minD, d), max(maxD, d), sum+d
		}
		// The jitter spreads over most of the ±20% and centres on the base.
		if minD > time.Duration(float64(base)*0.82) || maxD < time.Duration(float64(base)*1.18) {
			t.Errorf("Backoff(%d): spread [%v, %v] too narrow for base %v", attempt, minD, maxD, base)
		}
		if mean := sum / n; mean < time.Duration(float64(base)*0.98) || mean > time.Duration(float64(base)*1.02) {
			t.Errorf("Backoff(%d): mean %v, base %v", attempt, mean, base)
		}
		// It grows: up to 4 h each delay, jitter included, exceeds the last.
		if attempt <= 8 && minD <= prevMax {
			t.Errorf("Backoff(%d) min %v ≤ Backoff(%d) max %v", attempt, minD, attempt-1, prevMax)
		}
		prevMax = maxD
	}
	for _, attempt := range []int{-3, 0} {
		if d := Backoff(attempt, rnd); d < 4*time.Second || d >= 6*time.Second {
			t.Errorf("Backoff(%d) = %v, want the first delay", attempt, d)
		}
	}
	if d := Backoff(1000, nil); d < time.Duration(float64(4*time.Hour)*0.8) || d >= time.Duration(float64(4*time.Hour)*1.2) {
		t.Errorf("Backoff(1000, nil) = %v", d)
	}
}

func TestNextAttempt(t *testing.T) {
	created := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	deadline := created.Add(Window)
	rnd := rand.New(rand.NewPCG(testseed.Seed(t, "./internal/delivery", "delivery.seed", 3), 4))
	for _, c := range []struct {
		name     string
		now      time.Time
		attempts int
		wantAt   time.Time // zero: check the range instead
		dead     bool
	}{
		{"first attempt is due at once", created, 0, created, false},
		{"first attempt, even after the window", created.Add(48 * time.Hour), 0, created, false},
		{"after the window", deadline, 3, time.Time{}, true},
		{"long after the window", deadline.Add(time.Hour), 13, time.Time{}, true},
		{"near the end: clamped to the end", deadline.Add(-time.Minute), 9, deadline, false},
		{"one second before the end", deadline.Add(-time.Second), 1, deadline, false},
	} {
		at, dead := NextAttempt(created, c.now, c.attempts, rnd)
		if dead != c.dead || !at.Equal(c.wantAt) {
			t.Errorf("%s: NextAttempt = %v, %v; want %v, %v", c.name, at, dead, c.wantAt, c.dead)
		}
	}
	at, dead := NextAttempt(created, created.Add(time.Second), 1, rnd)
	if dead || at.Before(created.Add(5*time.Second)) || at.After(created.Add(7*time.Second)) {
		t.Errorf("after the first failure: %v, %v", at, dead)
	}
}

// A receiver that is down all day: the attempts come at growing delays,
// the last one at the end of the window, and then the event is dead.
func TestNextAttemptReceiverDownForADay(t *testing.T) {
	created := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	rnd := rand.New(rand.NewPCG(testseed.Seed(t, "./internal/delivery", "delivery.seed", 5), 6))
	now, attempts := created, 0
	var times []time.Time
	for {
		at, dead := NextAttempt(created, now, attempts, rnd)
		if dead {
			break
		}
		if at.Before(now) && attempts > 0 {
			t.Fatalf("attempt %d scheduled in the past", attempts+1)
		}
		now = at // the clock jumps to the attempt, which fails
		times = append(times, at)
		attempts++
		if attempts > 100 {
			t.Fatal("never dead")
		}
	}
	if last := times[len(times)-1]; !last.Equal(created.Add(Window)) {
		t.Errorf("last attempt at %v, want the end of the window", last.Sub(created))
	}
	if len(times) < 10 || len(times) > 16 {
		t.Errorf("%d attempts in 24 h", len(times))
	}
	for i := 2; i < len(times)-1 && i < 9; i++ {
		if times[i].Sub(times[i-1]) <= times[i-1].Sub(times[i-2]) {
			t.Errorf("delay %d (%v) not longer than delay %d (%v)", i, times[i].Sub(times[i-1]), i-1, times[i-1].Sub(times[i-2]))
		}
	}
}
