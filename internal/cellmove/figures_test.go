package cellmove

import (
	"context"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The pause of a move by the merchant's size, for docs/scaling.md: a
// merchant of n deposits (one entry, two postings and their bill lines
// each) moved between two databases of the test server. Run with
// GATEWAY_CELLMOVE_FIGURES=1000,100000 (entries); skipped otherwise, as it
// takes minutes.
func TestMovePauseFigures(t *testing.T) {
	spec := os.Getenv("GATEWAY_CELLMOVE_FIGURES")
	if spec == "" {
		t.Skip("set GATEWAY_CELLMOVE_FIGURES=1000,100000 to measure")
	}
	for _, s := range splitComma(spec) {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(s, func(t *testing.T) {
			c := newTwoCells(t)
			t0 := time.Now()
			fill(t, c, int64(n))
			made := time.Since(t0)
			c.mv.BackgroundRounds = 1
			t1 := time.Now()
			res, err := c.mv.Move(context.Background(), c.m.ShopNo)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("FIGURE entries=%d made=%v move=%v copy=%v pause=%v (tail %v, verify %v) remove=%v rows=%d", n, made.Round(time.Millisecond),
				time.Since(t1).Round(time.Millisecond), res.Copy.Round(time.Millisecond), res.Pause.Round(time.Millisecond),
				res.Tail.Round(time.Millisecond), res.Verify.Round(time.Millisecond), res.Remove.Round(time.Millisecond), res.Rows)
		})
	}
}

// fill makes n deposits of the merchant with 64 concurrent callers, so
// that group commit batches them.
func fill(t *testing.T, c *twoCells, n int64) {
	t.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= n {
				if _, err := c.g.Deposit(context.Background(), c.m.ID, "USD", 1, nil); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}
