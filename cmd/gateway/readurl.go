package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/ledger"
)

// The operator's commands (audit verify, audit statement) route their
// reads as serve does (internal/app.AttachReadRoute), with their own
// default wait.

// readWaitOperatorMs is the wait of the operator's commands when
// DATABASE_READ_WAIT_MS is not set: nobody is waiting on an HTTP answer,
// and a long audit is worth keeping off the primary.
const readWaitOperatorMs = 5_000

// attachReadRoute opens DATABASE_READ_URL, when it is set, and routes l's
// standby-tolerant reads through it; the returned function closes it.
// defaultWait is the wait when DATABASE_READ_WAIT_MS is not set.
func attachReadRoute(e *env, l *ledger.Ledger, o database.DBOptions, defaultWait time.Duration) (func(), error) {
	u := strings.TrimSpace(e.getenv("DATABASE_READ_URL"))
	if cfg, err := e.config(); err == nil && e.cell != "" {
		u = cfg.ReadURL // the cell's standby (GATEWAY_CELLS_READ_URLS)
	}
	if u == "" {
		return func() {}, nil
	}
	wait, err := parseReadWait(e.getenv("DATABASE_READ_WAIT_MS"), defaultWait)
	if err != nil {
		return nil, err
	}
	return app.AttachReadRoute(e.log, l, u, wait, o)
}

// parseReadWait reads DATABASE_READ_WAIT_MS: 0 to config.ReadWaitMsMax
// milliseconds; 0 means a read uses the standby only if it has already
// replayed the fence.
func parseReadWait(text string, def time.Duration) (time.Duration, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return def, nil
	}
	ms, err := strconv.Atoi(text)
	if err != nil || ms < 0 || ms > config.ReadWaitMsMax {
		return 0, fmt.Errorf("DATABASE_READ_WAIT_MS must be an integer from 0 to %d (milliseconds)", config.ReadWaitMsMax)
	}
	return app.ReadWait(ms), nil
}
