package pgtest

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"github.com/paygate/gateway/ledger/pgcluster"
)

// StartLoopbackCluster starts a cluster of its own that also listens on
// loopback TCP, on a port the kernel picked free a moment ago, with the
// gateway's roles made (pgcluster.EnsureRoles): for the tests of what the
// clusters require of a TCP client (scram-sha-256, TLS; docs/security.md
// 13). Stopped and removed when the test ends.
func StartLoopbackCluster(t testing.TB) *pgcluster.Cluster {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// A short directory: the socket's path must fit in 107 bytes.
	dir, err := os.MkdirTemp("", "pgc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c, err := pgcluster.Start(ctx, pgcluster.Options{Dir: dir, Port: port, ListenAddresses: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	if err := c.EnsureRoles(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}
