package delivery

import (
	"math/rand/v2"
	"time"
)

// Window is how long an event is retried, counted from its creation; an
// event whose attempt fails at or after created_at + Window is dead (failed,
// kept for replay).
const Window = 24 * time.Hour

// Jitter is the relative spread of each delay: ±20%.
const Jitter = 0.2

// schedule is the delay after the n-th failed attempt (n from 1); after the
// last entry the delay stays at 4 hours.
var schedule = [...]time.Duration{
	5 * time.Second,
	30 * time.Second,
	2 * time.Minute,
	10 * time.Minute,
	30 * time.Minute,
	1 * time.Hour,
	2 * time.Hour,
	4 * time.Hour,
}

// Backoff returns the delay before the next attempt after attempt failed
// attempts (1 for the first failure; values below 1 count as 1): 5 s, 30 s,
// 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, 4 h, …, each multiplied by a random
// factor in [0.8, 1.2). rnd gives the jitter; nil uses the goroutine-safe
// global source (a *rand.Rand is not safe for concurrent use).
func Backoff(attempt int, rnd *rand.Rand) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	base := schedule[len(schedule)-1]
	if attempt <= len(schedule) {
		base = schedule[attempt-1]
	}
	var u float64
	if rnd != nil {
		u = rnd.Float64()
	} else {
		u = rand.Float64() //nolint:gosec // G404: jitter, not a secret
	}
	return time.Duration(float64(base) * (1 + Jitter*(2*u-1)))
}

// NextAttempt says when to try an event again, given its creation time, the
// time now and the number of attempts made so far:
//
//   - no attempt yet: at createdAt (due at once), never dead, so that every
//     event is tried at least once;
//   - otherwise dead when now is at or past createdAt + Window;
//   - otherwise now + Backoff(attempts), but not later than the end of the
//     window, so the last attempt is made right at the end.
//
// A replayed event starts a new window: pass the replay time as createdAt
// and the attempts made since the replay.
func NextAttempt(createdAt, now time.Time, attempts int, rnd *rand.Rand) (at time.Time, dead bool) {
	if attempts <= 0 {
		return createdAt, false
	}
	deadline := createdAt.Add(Window)
	if !now.Before(deadline) {
		return time.Time{}, true
	}
	at = now.Add(Backoff(attempts, rnd))
	if at.After(deadline) {
		at = deadline
	}
	return at, false
}
