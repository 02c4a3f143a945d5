package main

// A primary that freezes (SIGSTOP of its processes, or its machine cut off:
// no RST) costs seconds, not the batch deadline: docs/ha.md, "a silent
// primary".

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/pgha"
	"github.com/paygate/gateway/ledger/pgtest"
)

// frozenWriteLimit bounds promotion → first acknowledged write. The goal is
// 5 s (the Watch's probe interval and timeout, 1 + 3 s, and a dial); the
// bound adds a margin for a loaded machine and stays below what the old
// gateway took (each pooled connection to the frozen node waited out the
// 20 s batch deadline).
const frozenWriteLimit = 12 * time.Second

// waitReady polls /readyz until it answers 200 (want) or 503 (!want).
func (f *haFixture) waitReady(want bool) time.Time {
	f.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := f.shop.client.Get(f.s.url("/readyz"))
		if err == nil {
			resp.Body.Close()
			if (resp.StatusCode == http.StatusOK) == want &&
				(want || resp.StatusCode == http.StatusServiceUnavailable) {
				return time.Now()
			}
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("/readyz did not become ready=%v within 30 s (last: %v)", want, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The primary freezes under load (a proxy in front of it stops forwarding,
// sends no RST, and greets no new connection) and the standby is promoted
// at once: /readyz goes 503, the first acknowledged write comes within
// seconds of the promotion, every request is answered well inside its
// budget with 200 or 503 and Retry-After, and every operation retried with
// its key takes effect exactly once.
func TestServeLeavesAFrozenPrimary(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	var bh *pgtest.Blackhole
	f := newHAFixtureOn(ctx, t, func(p *pgha.Pair) string {
		bh = pgtest.NewBlackhole(t, p.Primary().URL("gateway"))
		return fmt.Sprintf("postgres://postgres@%s,127.0.0.1:%d/gateway?target_session_attrs=read-write&connect_timeout=2&sslmode=disable",
			bh.Addr(), p.Standby().Port)
	})
	for i := 0; i < 5; i++ {
		if a, err := f.transfer(f.newKey("before")); err != nil || !a.ok() {
			t.Fatalf("a transfer before the freeze: %v %s", err, a.raw)
		}
	}
	f.waitReady(true)

	// Clients keep sending, each retrying its operation with its key.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var slowest time.Duration
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for n := 0; ; n++ {
				key := fmt.Sprintf("load-%d-%d", w, n)
				for deadline := time.Now().Add(haRetryMax); time.Now().Before(deadline); {
					select {
					case <-stop:
						return
					default:
					}
					a, err := f.transfer(key)
					mu.Lock()
					slowest = max(slowest, a.took)
					mu.Unlock()
					if err != nil || a.ok() || a.acceptable() != nil {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		}(w)
	}
	time.Sleep(300 * time.Millisecond) // load before the freeze; not synchronisation

	frozen := time.Now()
	bh.Freeze()
	if err := f.p.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	promoted := time.Now()
	f.retryUntilOK(f.newKey("after"))
	firstWrite := time.Now()
	ready := f.waitReady(true)
	time.Sleep(time.Second) // the clients go on on the new primary
	close(stop)
	wg.Wait()
	if d := firstWrite.Sub(promoted); d > frozenWriteLimit {
		t.Errorf("first acknowledged write %s after the promotion (%s after the freeze), want within %s",
			d.Round(time.Millisecond), firstWrite.Sub(frozen).Round(time.Millisecond), frozenWriteLimit)
	}
	// No request outlives the batch deadline by much, let alone its budget.
	if slowest > 25*time.Second {
		t.Errorf("the slowest request took %s", slowest.Round(time.Millisecond))
	}
	f.checkExactlyOnce(ctx)
	f.ops.mu.Lock()
	t.Logf("frozen primary: promotion %s after the freeze; first write %s after the promotion; ready again %s after it; "+
		"slowest request %s; %d acknowledged, %d answers 503", promoted.Sub(frozen).Round(time.Millisecond),
		firstWrite.Sub(promoted).Round(time.Millisecond), ready.Sub(promoted).Round(time.Millisecond),
		slowest.Round(time.Millisecond), len(f.ops.txIDs), f.ops.refused)
	f.ops.mu.Unlock()
}
