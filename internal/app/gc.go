package app

import (
	"runtime/debug"
	"strconv"

	"github.com/paygate/gateway/internal/config"
)

// The collector's settings for serve, unless the operator sets Go's own
// GOGC or GOMEMLIMIT. Go's default (GOGC=100: collect each time the heap
// doubles) kept the gateway's heap near 20 MB and spent about a tenth of its
// CPU marking; on the hot merchant's card creations a quarter of the
// gateway's CPU per request went with it (docs/performance.md, "The
// collector"). GOGC=400 lets the heap grow to five times what is live
// before a collection; the soft memory limit makes the collector work
// harder instead as the process nears it, well inside the 200 MB the
// gateway is allowed.
const (
	gcPercentServe        = 400
	memoryLimitServeBytes = 150 << 20
)

// TuneGC applies the settings above where the operator's GOGC and
// GOMEMLIMIT do not choose, and returns what applies, for the start-up
// log. It changes the whole process: serve calls it, Build does not.
func TuneGC(cfg *config.Config) (gogc, memLimit string) {
	gogc, memLimit = cfg.GOGC, cfg.GOMEMLIMIT
	if gogc == "" {
		debug.SetGCPercent(gcPercentServe)
		gogc = strconv.Itoa(gcPercentServe)
	}
	if memLimit == "" {
		debug.SetMemoryLimit(memoryLimitServeBytes)
		memLimit = strconv.Itoa(memoryLimitServeBytes>>20) + "MiB"
	}
	return gogc, memLimit
}
