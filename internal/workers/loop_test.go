package workers

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// never is an interval no test waits for: a step that runs again did so
// because it asked (more) or was woken, not because time passed.
const never = time.Hour

// steps returns a step that reports each call on a channel and answers
// with answer(call).
func steps(answer func(ctx context.Context, n int64) (bool, error)) (Step, <-chan int64) {
	calls := make(chan int64, 100)
	var n atomic.Int64
	return func(ctx context.Context) (bool, error) {
		i := n.Add(1)
		more, err := answer(ctx, i)
		calls <- i
		return more, err
	}, calls
}

func TestLoopRunsAtStartAndStops(t *testing.T) {
	step, calls := steps(func(context.Context, int64) (bool, error) { return false, nil })
	stopped := make(chan struct{})
	w := NewLoop("test", never, step, nil).OnStop(func() { close(stopped) })
	if w.Health().Running {
		t.Fatal("running before Start")
	}
	w.Start(context.Background())
	w.Start(context.Background()) // a second Start does nothing
	<-calls
	if h := w.Health(); !h.Running || h.Name != "test" {
		t.Fatalf("health after a step: %+v", h)
	}
	w.Stop()
	<-stopped
	h := w.Health()
	if h.Running || h.Steps != 1 || h.Failing != "" || h.LastOK.IsZero() {
		t.Fatalf("health after Stop: %+v", h)
	}
	select {
	case n := <-calls:
		t.Fatalf("step %d ran after Stop", n)
	default:
	}
}

// A step that has more to do runs again at once; Wake runs one at once.
func TestLoopMoreAndWake(t *testing.T) {
	step, calls := steps(func(_ context.Context, n int64) (bool, error) { return n < 3, nil })
	w := NewLoop("test", never, step, nil)
	w.Start(context.Background())
	defer w.Stop()
	for want := int64(1); want <= 3; want++ {
		if n := <-calls; n != want {
			t.Fatalf("step %d, want %d", n, want)
		}
	}
	w.Wake()
	if n := <-calls; n != 4 {
		t.Fatalf("woken step %d, want 4", n)
	}
}

// A failing step is in Health until a step succeeds; a step cut short by
// the stop is not a failure. Each step looks at the health the steps before
// it left.
func TestLoopHealthRecordsFailures(t *testing.T) {
	fail := errors.New("database down")
	var w *Loop
	seen := make(chan Health, 3)
	step, calls := steps(func(ctx context.Context, n int64) (bool, error) {
		seen <- w.Health()
		switch n {
		case 1:
			return false, fail
		case 2:
			return false, nil
		default:
			<-ctx.Done()
			return false, ctx.Err()
		}
	})
	w = NewLoop("test", never, step, nil)
	w.Start(context.Background())
	<-calls
	<-seen
	w.Wake()
	<-calls
	if h := <-seen; h.Failing != fail.Error() || !h.LastOK.IsZero() || h.Steps != 1 {
		t.Fatalf("after a failure: %+v", h)
	}
	w.Wake()
	if h := <-seen; h.Failing != "" || h.LastOK.IsZero() || h.Steps != 2 {
		t.Fatalf("after a success: %+v", h)
	}
	// The third step (it has begun: it sent what it saw) waits for the
	// stop, and ends with its cancellation.
	w.Stop()
	<-calls
	if h := w.Health(); h.Failing != "" || h.Steps != 3 {
		t.Fatalf("after the stop: %+v", h)
	}
}

func TestGroup(t *testing.T) {
	a, ac := steps(func(context.Context, int64) (bool, error) { return false, nil })
	b, bc := steps(func(context.Context, int64) (bool, error) { return false, errors.New("b failed") })
	g := NewGroup(NewLoop("a", never, a, nil), NewLoop("b", never, b, nil))
	g.Start(context.Background())
	<-ac
	<-bc
	// A step reports its call before the loop records its outcome, and an
	// outcome recorded after Stop has cancelled the step is (rightly) not a
	// failure: wait until both outcomes are recorded before stopping.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		hs := g.Health()
		if hs[0].Steps >= 1 && hs[1].Steps >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("outcomes not recorded: %+v", hs)
		}
	}
	g.Stop()
	hs := g.Health()
	if len(hs) != 2 || hs[0].Name != "a" || hs[1].Name != "b" || hs[0].Running || hs[1].Running ||
		hs[0].Failing != "" || hs[1].Failing != "b failed" {
		t.Fatalf("health: %+v", hs)
	}
}
