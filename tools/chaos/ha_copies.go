package main

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// The single-copy window of a loss scenario (issue 31, point 3): the time
// during which a commit the primary acknowledges exists on one node only.
// A commit waits for a synchronous standby's flush exactly when the
// primary's synchronous_standby_names is set (synchronous_commit is on);
// pg_auto_failover empties it when it lets the primary go on alone
// (wait_primary). So the window is measured on whichever node is primary,
// through the formation's read-write URL, every copiesEvery: the time from
// a sample that finds it empty to the next sample. While no primary
// answers, nothing is acknowledged, and nothing is counted.
const copiesEvery = 100 * time.Millisecond

// copiesSampler samples the primary's synchronous_standby_names until
// stopped.
type copiesSampler struct {
	mu     sync.Mutex
	single time.Duration // the sum of the windows
	last   time.Time     // the last sample that found it empty (zero: none pending)
	done   chan struct{}
	stop   context.CancelFunc
}

// sampleCopies starts sampling through url (the formation's URL as a role
// that may read the setting).
func sampleCopies(ctx context.Context, url string) *copiesSampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &copiesSampler{done: make(chan struct{}), stop: cancel}
	go func() {
		defer close(s.done)
		db, err := sql.Open("pgx", url)
		if err != nil {
			return
		}
		defer db.Close()
		db.SetMaxOpenConns(1)
		t := time.NewTicker(copiesEvery)
		defer t.Stop()
		for {
			s.sample(ctx, db)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *copiesSampler) sample(ctx context.Context, db *sql.DB) {
	// A frozen primary must not hold the sampler: one second per sample.
	qctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var names string
	err := db.QueryRowContext(qctx, "show synchronous_standby_names").Scan(&names)
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.last.IsZero() {
		s.single += now.Sub(s.last)
		s.last = time.Time{}
	}
	if err == nil && names == "" {
		s.last = now
	}
}

// finish stops the sampler and returns the window.
func (s *copiesSampler) finish() time.Duration {
	s.stop()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.single
}
