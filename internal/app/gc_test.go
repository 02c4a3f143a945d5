package app

import (
	"runtime/debug"
	"testing"

	"github.com/paygate/gateway/internal/config"
)

// serve sets the collector only where the operator did not: GOGC and
// GOMEMLIMIT in the environment win. Not parallel: the settings are the
// process's.
func TestTuneGCLeavesTheOperatorsChoice(t *testing.T) {
	percent0, limit0 := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(percent0)
		debug.SetMemoryLimit(limit0)
	})
	for _, c := range []struct {
		name                 string
		env                  map[string]string
		wantPercent          int
		wantLimit            int64
		wantGOGC, wantMemLim string
	}{
		{"defaults", nil, gcPercentServe, memoryLimitServeBytes, "400", "150MiB"},
		{"operator's GOGC", map[string]string{"GOGC": "50"}, 100, memoryLimitServeBytes, "50", "150MiB"},
		{"operator's GOMEMLIMIT", map[string]string{"GOMEMLIMIT": "1GiB"}, gcPercentServe, 1 << 30, "400", "1GiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// What the runtime would have read from the environment.
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(1 << 30)
			cfg, err := config.FromEnvironment(func(k string) string { return c.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			gogc, memLimit := TuneGC(cfg)
			if gogc != c.wantGOGC || memLimit != c.wantMemLim {
				t.Errorf("reported GOGC %q GOMEMLIMIT %q, want %q %q", gogc, memLimit, c.wantGOGC, c.wantMemLim)
			}
			if got := debug.SetGCPercent(100); got != c.wantPercent {
				t.Errorf("GC percent %d, want %d", got, c.wantPercent)
			}
			if got := debug.SetMemoryLimit(-1); got != c.wantLimit {
				t.Errorf("memory limit %d, want %d", got, c.wantLimit)
			}
		})
	}
}
