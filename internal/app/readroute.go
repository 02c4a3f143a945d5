package app

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/ledger"
)

// DATABASE_READ_URL: reads that scan much and change nothing (the bill and
// its export, the statement, audit verify, the batch balance read) go to a
// hot standby once it has replayed what the primary had committed when the
// read began; the rule and its bound are internal/database/readroute.go's, the
// decision docs/ha.md's "Reads from the standby".

// ReadWait turns DATABASE_READ_WAIT_MS into the ledger's wait: 0 ms means
// a read uses the standby only if it has already replayed the fence, which
// the ledger spells as a negative wait.
func ReadWait(ms int) time.Duration {
	if ms <= 0 {
		return -1
	}
	return time.Duration(ms) * time.Millisecond
}

// AttachReadRoute opens url, when it is set, and routes l's
// standby-tolerant reads through it; the returned function closes it. The
// pool gets o's connections.
func AttachReadRoute(log *slog.Logger, l *ledger.Ledger, url string, wait time.Duration, o database.DBOptions) (func(), error) {
	if url == "" {
		return func() {}, nil
	}
	// Lazy: a standby that is down when the gateway starts only sends the
	// reads to the primary until it is back.
	db, err := database.OpenDBLazy(url, o)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_READ_URL: %w", err)
	}
	r := database.NewReadRoute(l.DB(), db, database.ReadRouteOptions{WaitMax: wait})
	l.SetReadRoute(r)
	log.Info("reads of the bill, statement, audit and batch balances may go to DATABASE_READ_URL", "waitMax", wait.String())
	return func() { _ = r.Close() }, nil
}
