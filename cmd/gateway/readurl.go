package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/gateway/ledger"
)

// DATABASE_READ_URL: reads that scan much and change nothing (the bill and
// its export, the statement, audit verify, the batch balance read) go to a
// hot standby once it has replayed what the primary had committed when the
// read began; the rule and its bound are ledger/readroute.go's, the
// decision docs/ha.md's "Reads from the standby".

// readWaitMsMax bounds DATABASE_READ_WAIT_MS: a request's whole budget is
// 60 s, and a wait longer than a few seconds is better spent on the primary.
const readWaitMsMax = 10_000

// readWaitOperatorMs is the wait of the operator's commands (audit verify,
// audit statement) when DATABASE_READ_WAIT_MS is not set: nobody is waiting
// on an HTTP answer, and a long audit is worth keeping off the primary.
const readWaitOperatorMs = 5_000

// attachReadRoute opens DATABASE_READ_URL, when it is set, and routes l's
// standby-tolerant reads through it; the returned function closes it. The
// pool gets connsMax connections. defaultWait is the wait when
// DATABASE_READ_WAIT_MS is not set (0: ledger.ReadWaitMaxDefault).
func attachReadRoute(e *env, l *ledger.Ledger, o ledger.DBOptions, defaultWait time.Duration) (func(), error) {
	u := strings.TrimSpace(e.getenv("DATABASE_READ_URL"))
	if u == "" {
		return func() {}, nil
	}
	wait, err := parseReadWait(e.getenv("DATABASE_READ_WAIT_MS"), defaultWait)
	if err != nil {
		return nil, err
	}
	// Lazy: a standby that is down when the gateway starts only sends the
	// reads to the primary until it is back.
	db, err := ledger.OpenDBLazy(u, o)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_READ_URL: %w", err)
	}
	r := ledger.NewReadRoute(l.DB(), db, ledger.ReadRouteOptions{WaitMax: wait})
	l.SetReadRoute(r)
	e.log.Info("reads of the bill, statement, audit and batch balances may go to DATABASE_READ_URL", "waitMax", wait.String())
	return func() { _ = r.Close() }, nil
}

// parseReadWait reads DATABASE_READ_WAIT_MS: 0 to readWaitMsMax
// milliseconds; 0 means a read uses the standby only if it has already
// replayed the fence.
func parseReadWait(text string, def time.Duration) (time.Duration, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return def, nil
	}
	ms, err := strconv.Atoi(text)
	if err != nil || ms < 0 || ms > readWaitMsMax {
		return 0, fmt.Errorf("DATABASE_READ_WAIT_MS must be an integer from 0 to %d (milliseconds)", readWaitMsMax)
	}
	if ms == 0 {
		return -1, nil // ledger: negative is "do not wait"
	}
	return time.Duration(ms) * time.Millisecond, nil
}
