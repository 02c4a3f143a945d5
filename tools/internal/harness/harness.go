// Package harness runs the real gateway for the programs that measure and
// break it (cmd/bench, cmd/chaos): it builds the binary, keeps a durable
// PostgreSQL cluster that can be killed and restarted, and starts `gateway
// serve` processes on ports of their own, waits until they are ready,
// keeps their logs, and stops or kills them. Everything listens on the
// loopback only.
package harness

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/paygate/gateway/ledger/pgcluster"
)

// Build compiles ./cmd/gateway into dst, printing the compiler's output to
// log. Run it first: it is the step most likely to fail (the tree may be in
// the middle of a change), and it needs no database.
func Build(ctx context.Context, dst string, log io.Writer) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", dst, "./cmd/gateway")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building the gateway: %w", err)
	}
	return nil
}

// Postgres is a durable cluster in a directory of its own, which can be
// killed (immediate mode: crash recovery at the next start) and started
// again on the same data.
type Postgres struct {
	opts pgcluster.Options
	mu   sync.Mutex
	c    *pgcluster.Cluster
}

// StartPostgres starts a cluster with opts (Durable: fsync and synchronous
// commit on, as in production).
func StartPostgres(ctx context.Context, opts pgcluster.Options) (*Postgres, error) {
	p := &Postgres{opts: opts}
	if err := p.Start(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// Start starts the cluster (again) on its directory.
func (p *Postgres) Start(ctx context.Context) error {
	c, err := pgcluster.Start(ctx, p.opts)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.c = c
	p.mu.Unlock()
	return nil
}

// Cluster is the running cluster.
func (p *Postgres) Cluster() *pgcluster.Cluster {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.c
}

// Kill stops the server in immediate mode: no checkpoint.
func (p *Postgres) Kill() { p.Cluster().Kill() }

// Stop stops the server cleanly.
func (p *Postgres) Stop() error {
	if c := p.Cluster(); c != nil {
		return c.Stop()
	}
	return nil
}

// NewDatabase creates a database and returns its URL.
func (p *Postgres) NewDatabase(ctx context.Context, name string) (string, error) {
	c := p.Cluster()
	if err := c.CreateDatabase(ctx, name); err != nil {
		return "", err
	}
	return c.URL(name), nil
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// TailFile is the last n lines of a file ("" if it cannot be read).
func TailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// MinimalEnv is the environment a gateway process gets besides its
// settings when none is given: enough to run, nothing of the caller's.
func MinimalEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
}
