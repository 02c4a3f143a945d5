package opsmetrics

import (
	"context"
	"sync"
	"time"
)

// Every caches f's answer for d: pgBackRest's info spawns a process and
// reads the repository, too much for every 15-second reading, while a
// backup's age alert is in hours. A failure is not cached.
func Every(d time.Duration, f func(context.Context) (time.Time, error)) func(context.Context) (time.Time, error) {
	var (
		mu   sync.Mutex
		last time.Time
		at   time.Time
	)
	return func(ctx context.Context) (time.Time, error) {
		mu.Lock()
		defer mu.Unlock()
		if !at.IsZero() && time.Since(at) < d {
			return last, nil
		}
		t, err := f(ctx)
		if err != nil {
			return last, err
		}
		last, at = t, time.Now()
		return t, nil
	}
}
