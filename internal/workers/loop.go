package workers

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Step is one round of a worker's work. more asks for another round at
// once (a full batch left work behind, or its work freed more), even after
// an error; otherwise the next round waits for the interval or a Wake.
type Step func(ctx context.Context) (more bool, err error)

// Loop is a Worker that runs Step every interval.
type Loop struct {
	name     string
	interval time.Duration
	step     Step
	log      *slog.Logger
	onStop   func()
	wake     chan struct{}

	mu      sync.Mutex
	cancel  context.CancelFunc
	done    chan struct{}
	started bool
	health  Health
}

// NewLoop returns a worker that runs step every interval; log receives its
// failures (nil: discarded).
func NewLoop(name string, interval time.Duration, step Step, log *slog.Logger) *Loop {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Loop{name: name, interval: interval, step: step, log: log, wake: make(chan struct{}, 1),
		health: Health{Name: name}}
}

// OnStop sets fn to run once the loop has stopped (to release what its
// steps held, such as idle connections). Call it before Start.
func (w *Loop) OnStop(fn func()) *Loop {
	w.onStop = fn
	return w
}

// Name implements Worker.
func (w *Loop) Name() string { return w.name }

// Wake makes the loop run a step at once instead of at the next tick (a
// commit that wrote deliveries wakes the callback dispatcher). It never
// blocks.
func (w *Loop) Wake() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Start implements Worker.
func (w *Loop) Start(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started {
		return
	}
	ctx, w.cancel = context.WithCancel(ctx)
	w.done = make(chan struct{})
	w.started = true
	w.health.Running = true
	go w.run(ctx)
}

// Stop implements Worker.
func (w *Loop) Stop() {
	w.mu.Lock()
	cancel, done := w.cancel, w.done
	w.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

// Health implements Worker.
func (w *Loop) Health() Health {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.health
}

func (w *Loop) run(ctx context.Context) {
	defer func() {
		if w.onStop != nil {
			w.onStop()
		}
		w.mu.Lock()
		w.health.Running = false
		w.mu.Unlock()
		w.log.Debug("worker stopped", "worker", w.name)
		close(w.done)
	}()
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for ctx.Err() == nil {
		more, err := w.step(ctx)
		w.record(err, ctx.Err() != nil)
		if more {
			continue
		}
		select {
		case <-ctx.Done():
		case <-t.C:
		case <-w.wake:
		}
	}
}

// record keeps the outcome of a step; a step cut short by the stop is not
// a failure.
func (w *Loop) record(err error, stopping bool) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.health.Steps++
	w.health.LastRun = now
	switch {
	case err == nil:
		w.health.LastOK, w.health.Failing = now, ""
	case !stopping:
		w.health.Failing = err.Error()
		w.health.Failures++
		w.log.Warn("worker", "worker", w.name, "error", err)
	}
}

// Group is a set of workers started and stopped together.
type Group struct {
	workers []Worker
}

// NewGroup returns a group of ws.
func NewGroup(ws ...Worker) *Group { return &Group{workers: ws} }

// Start starts every worker.
func (g *Group) Start(ctx context.Context) {
	for _, w := range g.workers {
		w.Start(ctx)
	}
}

// Stop stops every worker and waits for them.
func (g *Group) Stop() {
	var wg sync.WaitGroup
	for _, w := range g.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.Stop()
		}()
	}
	wg.Wait()
}

// Health is every worker's health, in the group's order.
func (g *Group) Health() []Health {
	out := make([]Health, len(g.workers))
	for i, w := range g.workers {
		out[i] = w.Health()
	}
	return out
}
