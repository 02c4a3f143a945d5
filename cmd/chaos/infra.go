package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/fx"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgcluster"
)

// env is what every scenario shares: the gateway binary, the durable
// PostgreSQL cluster (which the outage scenario kills and restarts), the
// data key and the internal API token.
type env struct {
	tmp      string
	bin      string
	pgOpts   pgcluster.Options
	mu       sync.Mutex
	cluster  *pgcluster.Cluster
	dataKey  []byte
	token    string
	verbose  bool
	out      io.Writer
	sealer   *ledger.Sealer
	logFiles []string
}

func (e *env) logf(format string, args ...any) {
	fmt.Fprintf(e.out, "%s  "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
}

func (e *env) debugf(format string, args ...any) {
	if e.verbose {
		e.logf(format, args...)
	}
}

// build compiles the gateway into the temporary directory.
func (e *env) build(ctx context.Context) error {
	e.bin = filepath.Join(e.tmp, "gateway")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", e.bin, "./cmd/gateway")
	cmd.Stdout, cmd.Stderr = e.out, e.out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building the gateway: %w", err)
	}
	return nil
}

// startPG starts (or restarts, on the same directory) the durable cluster.
func (e *env) startPG(ctx context.Context) error {
	c, err := pgcluster.Start(ctx, e.pgOpts)
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.cluster = c
	e.mu.Unlock()
	return nil
}

// killPG stops PostgreSQL in immediate mode: no checkpoint, crash recovery
// at the next start.
func (e *env) killPG() {
	e.mu.Lock()
	c := e.cluster
	e.mu.Unlock()
	c.Kill()
}

func (e *env) stopPG() {
	e.mu.Lock()
	c := e.cluster
	e.mu.Unlock()
	if c != nil {
		_ = c.Stop()
	}
}

// newDatabase creates a database for one scenario and returns its URL.
func (e *env) newDatabase(ctx context.Context, name string) (string, error) {
	e.mu.Lock()
	c := e.cluster
	e.mu.Unlock()
	if err := c.CreateDatabase(ctx, name); err != nil {
		return "", err
	}
	return c.URL(name), nil
}

// services is a ledger of this process with the domains on it.
type services struct {
	*ledger.Ledger
	cards   *cards.Service
	network *network.Service
	remit   *remittance.Service
}

// openLedger opens the scenario's database with a ledger of its own (setup
// and checks run in this process, beside the gateways); holds expire after
// holdExpiry (0: the default).
func (e *env) openLedger(ctx context.Context, url string, conns int, cfg ledger.Config, holdExpiry time.Duration) (*bun.DB, *services, error) {
	db, err := ledger.OpenDB(ctx, url, ledger.DBOptions{ConnsMax: conns})
	if err != nil {
		return nil, nil, err
	}
	if err := ledger.Migrate(ctx, db); err != nil {
		db.Close()
		return nil, nil, err
	}
	cfg.Sealer = e.sealer
	l := ledger.New(db, cfg)
	rates := fx.New(l, 0)
	c := cards.New(l, rates)
	return db, &services{Ledger: l, cards: c, remit: remittance.New(l),
		network: network.New(l, c, rates, network.Config{HoldExpiry: holdExpiry})}, nil
}

// freePort returns a loopback port that was free a moment ago. The gateway
// is restarted on the same one, so clients keep their address.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// gatewayProc is one `gateway serve` subprocess, restartable on its ports.
type gatewayProc struct {
	e            *env
	name         string
	port         int
	internalPort int
	extraEnv     []string
	dbURL        string

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	logPath string
	starts  int
	kills   int
}

func (e *env) newGateway(name, dbURL string, extra ...string) (*gatewayProc, error) {
	p, err := freePort()
	if err != nil {
		return nil, err
	}
	ip, err := freePort()
	if err != nil {
		return nil, err
	}
	g := &gatewayProc{e: e, name: name, port: p, internalPort: ip, extraEnv: extra, dbURL: dbURL,
		logPath: filepath.Join(e.tmp, "logs", name+".log")}
	if err := os.MkdirAll(filepath.Dir(g.logPath), 0o755); err != nil {
		return nil, err
	}
	e.logFiles = append(e.logFiles, g.logPath)
	return g, nil
}

func (g *gatewayProc) baseURL() string { return "http://127.0.0.1:" + strconv.Itoa(g.port) }
func (g *gatewayProc) internalURL() string {
	return "http://127.0.0.1:" + strconv.Itoa(g.internalPort)
}

func (g *gatewayProc) environ() []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"DATABASE_URL=" + g.dbURL,
		"GATEWAY_DATA_DIR=" + filepath.Join(g.e.tmp, "data-"+g.name),
		"GATEWAY_DATA_KEY=" + hex.EncodeToString(g.e.dataKey),
		"GATEWAY_ADDR=127.0.0.1:" + strconv.Itoa(g.port),
		"GATEWAY_INTERNAL_ADDR=127.0.0.1:" + strconv.Itoa(g.internalPort),
		"GATEWAY_INTERNAL_TOKEN=" + g.e.token,
		"GATEWAY_PLAIN_HTTP=true",
		"GATEWAY_RATE_LIMIT_RPS=off",
		"GATEWAY_CONNS_PER_CLIENT_MAX=off", // every client is 127.0.0.1
		"GATEWAY_LOG_LEVEL=warn",
		"GATEWAY_CALLBACK_ALLOW_PRIVATE=true",
	}
	return append(env, g.extraEnv...)
}

// start runs the gateway and waits until it serves and its database
// answers (/readyz).
func (g *gatewayProc) start(ctx context.Context) error {
	logf, err := os.OpenFile(g.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(logf, "=== start %d at %s\n", g.starts+1, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(g.e.bin, "serve")
	cmd.Env = g.environ()
	cmd.Stdout, cmd.Stderr = logf, logf
	// The gateway dies with this program, whatever happens to it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	g.mu.Lock()
	g.cmd, g.exited = cmd, exited
	g.starts++
	g.mu.Unlock()
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case <-exited:
			return fmt.Errorf("%s exited during start-up; its log ends:\n%s", g.name, tailFile(g.logPath, 15))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		resp, err := client.Get(g.baseURL() + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s was not ready within 90s", g.name)
		}
	}
}

// kill sends SIGKILL (kill -9) and waits for the process to be gone.
func (g *gatewayProc) kill() {
	g.mu.Lock()
	cmd, exited := g.cmd, g.exited
	g.kills++
	g.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

// stop asks for a clean shutdown (SIGTERM), then kills.
func (g *gatewayProc) stop() {
	g.mu.Lock()
	cmd, exited := g.cmd, g.exited
	g.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-exited:
		return
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
	}
}

// alive reports whether the process started last is still running, and its
// pid.
func (g *gatewayProc) alive() (bool, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cmd == nil {
		return false, 0
	}
	select {
	case <-g.exited:
		return false, g.cmd.Process.Pid
	default:
		return true, g.cmd.Process.Pid
	}
}

// auditVerify runs `gateway audit verify` on the scenario's database.
func (e *env) auditVerify(ctx context.Context, dbURL string) (bool, string) {
	cmd := exec.CommandContext(ctx, e.bin, "audit", "verify")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "DATABASE_URL=" + dbURL,
		"GATEWAY_DATA_KEY=" + hex.EncodeToString(e.dataKey), "GATEWAY_DATA_DIR=" + filepath.Join(e.tmp, "data-audit"),
		"GATEWAY_LOG_LEVEL=warn"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := strings.TrimSpace(out.String())
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return false, fmt.Sprintf("exit status %d: %s", ee.ExitCode(), lastLines(text, 20))
		}
		return false, err.Error()
	}
	return true, lastLines(text, 3)
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func tailFile(path string, n int) string {
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
