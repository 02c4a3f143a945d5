package main

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// runResult is what one timed run measured.
type runResult struct {
	opsPerSec float64
	n         int64
	lat       latencies // sorted
	errs      int64
	firstErr  error
	start     time.Time // the measured window: start … start+window
	window    time.Duration
	elapsed   time.Duration
	// Of the gateway process, when it runs: CPU milliseconds per operation
	// and the largest resident memory seen during the run.
	cpuPerOpMs float64
	rssMaxMB   float64
	// CPU milliseconds per operation of PostgreSQL (every server process)
	// and of this process (the clients), for every run.
	pgCPUPerOpMs    float64
	benchCPUPerOpMs float64
	// The gateway's ledger writer during the window: commands per
	// transaction, batches split to run command by command, retries.
	batching        float64
	splits, retries float64
}

func (r *runResult) p50() float64 { return r.lat.percentile(0.50) }
func (r *runResult) p99() float64 { return r.lat.percentile(0.99) }

// errorNote describes the failed operations of a run, if any.
func (r *runResult) errorNote() string {
	if r.errs == 0 {
		return ""
	}
	return fmt.Sprintf("%d operations failed, first: %v", r.errs, r.firstErr)
}

// driveSpec is one timed run.
type driveSpec struct {
	concurrency int
	duration    time.Duration
	warmup      time.Duration
	// profile names a perf recording of the measured window (with -perf).
	profile string
	// gateway: measure the gateway process's CPU and memory.
	gateway bool
	// op is one operation of worker w (0 … concurrency-1), i-th of that
	// worker. An error is counted, not fatal; the worker pauses briefly.
	op func(w, i int) error
}

// drive runs spec.op from spec.concurrency workers: a warm-up, then the
// measured window. Operations still running when the window closes are left
// to finish (their connections stay usable) but are not counted.
func (b *bench) drive(spec driveSpec) (*runResult, error) {
	if spec.concurrency < 1 {
		spec.concurrency = 1
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		all      latencies
		count    atomic.Int64
		errs     atomic.Int64
		firstErr error
		measure  atomic.Bool
		stop     atomic.Bool
		windowAt atomic.Int64 // UnixNano of the window's end
	)
	windowAt.Store(1<<63 - 1)
	for w := 0; w < spec.concurrency; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var local latencies
			for i := 0; !stop.Load() && b.ctx.Err() == nil; i++ {
				t0 := time.Now()
				err := spec.op(w, i)
				t1 := time.Now()
				counted := measure.Load() && t1.UnixNano() <= windowAt.Load()
				if err != nil {
					if b.ctx.Err() != nil {
						break
					}
					if counted {
						errs.Add(1)
					}
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					time.Sleep(5 * time.Millisecond)
					continue
				}
				if counted {
					local = append(local, t1.Sub(t0))
					count.Add(1)
				}
			}
			mu.Lock()
			all = append(all, local...)
			mu.Unlock()
		}(w)
	}
	sleepCtx(b.ctx, spec.warmup)
	var cpu0 float64
	var ls0 ledgerStats
	if spec.gateway && b.gw != nil {
		ls0, _ = b.gw.ledgerStats(b.ctx)
		cpu0 = b.gw.cpuMs()
		b.gw.rss.resetWindow()
	}
	pg0, self0 := b.pgCPUMs(), procCPUMs(os.Getpid())
	stopPerf := func() {}
	if spec.profile != "" {
		stopPerf = b.startPerf(spec.profile)
	}
	start := time.Now()
	windowAt.Store(start.Add(spec.duration).UnixNano())
	measure.Store(true)
	sleepCtx(b.ctx, spec.duration)
	elapsed := time.Since(start)
	pg1, self1 := b.pgCPUMs(), procCPUMs(os.Getpid())
	stopPerf()
	var cpu1 float64
	var ls1 ledgerStats
	if spec.gateway && b.gw != nil {
		cpu1 = b.gw.cpuMs()
		ls1, _ = b.gw.ledgerStats(b.ctx)
	}
	stop.Store(true)
	wg.Wait()
	if err := b.ctx.Err(); err != nil {
		return nil, err
	}
	res := &runResult{n: count.Load(), errs: errs.Load(), firstErr: firstErr, elapsed: elapsed, lat: all.sorted(),
		start: start, window: spec.duration}
	res.opsPerSec = float64(res.n) / spec.duration.Seconds() // counted: completed inside the window
	if res.n > 0 {
		res.pgCPUPerOpMs = (pg1 - pg0) / float64(res.n)
		res.benchCPUPerOpMs = (self1 - self0) / float64(res.n)
	}
	if spec.gateway && b.gw != nil {
		if res.n > 0 {
			res.cpuPerOpMs = (cpu1 - cpu0) / float64(res.n)
		}
		res.rssMaxMB = b.gw.rss.windowMax()
		if d := ls1.batches - ls0.batches; d > 0 {
			res.batching = (ls1.commands - ls0.commands) / d
			res.splits, res.retries = ls1.splits-ls0.splits, ls1.retries-ls0.retries
		}
	}
	if res.n == 0 {
		if firstErr == nil {
			firstErr = errors.New("no operation completed")
		}
		return res, fmt.Errorf("no operation succeeded: %w", firstErr)
	}
	return res, nil
}
