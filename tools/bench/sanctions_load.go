package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// --- U: the API while a sanctions list loads (issue 27, 8e) ------------------
//
// An 8 MiB sanctions upload once took 536 MB and 7.5 minutes and raised
// /shop/account's median from 9 to 71 ms. This row reads /shop/account
// from the scenario-4 merchants for one window with nothing else running,
// then for one window while `gateway sanctions load` replaces the list
// with an 8 MiB file again and again (the console's largest upload; the
// console runs the same LoadSanctions), and compares the medians: the
// target is at most 1.5× (docs/remittances.md, "Sanctions list"). The
// notes give the loads' count, wall time, CPU and largest resident memory.

// sanctionsBenchBytes is the size of the list loaded.
const sanctionsBenchBytes = 8 << 20

func scenarioSanctionsLoad(b *bench) ([]row, error) {
	if b.gatewayBin == "" {
		return nil, fmt.Errorf("needs the gateway binary")
	}
	s, err := b.spread()
	if err != nil {
		return nil, err
	}
	list := filepath.Join(b.dir, "sanctions-8mib.csv")
	if err := writeSanctionsList(list, sanctionsBenchBytes); err != nil {
		return nil, err
	}
	conc := b.o.concurrency
	rngs := newRngs(conc, 27)
	read := driveSpec{concurrency: conc, duration: b.o.duration, warmup: b.o.warmup, gateway: true,
		op: func(w, _ int) error {
			_, err := s.merchants[rngs[w].IntN(len(s.merchants))].shop.Account(b.ctx)
			return err
		}}
	progress(b.log, "U: GET /shop/account, %d clients, %s, without a load", conc, b.o.duration)
	read.profile = "U-account-quiet"
	quiet, err := b.drive(read)
	if err != nil {
		return nil, err
	}

	progress(b.log, "U: the same while `gateway sanctions load` loads an 8 MiB list again and again")
	done := make(chan struct{})
	var wg sync.WaitGroup
	var loads loadStats
	wg.Add(1)
	go func() {
		defer wg.Done()
		loads.loop(b, list, done)
	}()
	read.profile = "U-account-loading"
	busy, err := b.drive(read)
	close(done)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	r := gatewayRow("U  /shop/account during an 8 MiB sanctions load", busy, nil)
	ratio := busy.p50() / max(quiet.p50(), 0.001)
	r.Target, r.Measured, r.Verdict = "p50 ≤ 1.5× without", fmt.Sprintf("%.2f× (%.1f → %.1f ms)", ratio, quiet.p50(), busy.p50()), verdict(ratio <= 1.5 && loads.n > 0)
	r.Note = joinNotes(loads.note(), busy.errorNote())
	return []row{r}, nil
}

// writeSanctionsList writes a list of about size bytes.
func writeSanctionsList(path string, size int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	n, _ := w.WriteString("name,country,list,id\n")
	for i := 0; n < size; i++ {
		k, _ := fmt.Fprintf(w, "Entity Number %d Trading Holdings LLC,IR,BENCH,%d\n", i, i)
		n += k
	}
	if err := w.Flush(); err != nil {
		f.Close() //nolint:errcheck // the write's error is the one to report
		return err
	}
	return f.Close()
}

// loadStats are the loads run during the window.
type loadStats struct {
	n         int
	wall, cpu time.Duration
	maxRSSMB  float64
	firstErr  error
}

// loop runs loads one after another until done.
func (s *loadStats) loop(b *bench, list string, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		default:
		}
		cmd, _, closeLog, err := b.gatewayCmd("sanctions-load.log", "sanctions", "load", "--file", list)
		if err != nil {
			s.firstErr = err
			return
		}
		t0 := time.Now()
		err = cmd.Run()
		closeLog()
		if err != nil {
			if s.firstErr == nil && b.ctx.Err() == nil {
				s.firstErr = err
			}
			return
		}
		s.n++
		s.wall += time.Since(t0)
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			s.cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			s.maxRSSMB = max(s.maxRSSMB, float64(ru.Maxrss)/1024)
		}
	}
}

func (s *loadStats) note() string {
	if s.n == 0 {
		return fmt.Sprintf("no load finished in the window (%v)", s.firstErr)
	}
	return fmt.Sprintf("%d loads, each %.1f s wall, %.1f s CPU, max RSS %.0f MB", s.n,
		s.wall.Seconds()/float64(s.n), s.cpu.Seconds()/float64(s.n), s.maxRSSMB)
}
