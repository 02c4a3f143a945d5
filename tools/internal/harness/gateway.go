package harness

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/paygate/gateway/api/client"
	"github.com/paygate/gateway/internal/netclient"
)

// GatewayConfig is one `gateway serve` process.
type GatewayConfig struct {
	// Bin is the gateway binary (Build).
	Bin string
	// Name names the process in messages.
	Name string
	// DataDir is its GATEWAY_DATA_DIR (the TLS certificate is made there);
	// LogPath where its standard output and error go (appended to, a line
	// "=== start N" before each start).
	DataDir, LogPath string
	DatabaseURL      string
	// DataKey is GATEWAY_DATA_KEY (hex), InternalToken the internal API's
	// bearer token.
	DataKey, InternalToken string
	// PlainHTTP serves plain HTTP; otherwise HTTPS with the self-signed
	// certificate of DataDir, which HTTPClient trusts.
	PlainHTTP bool
	// BaseEnv is the environment under the settings; MinimalEnv when nil.
	BaseEnv []string
	// Env is added last, and wins (GATEWAY_LOG_LEVEL=warn, …).
	Env []string
	// IdleConnsMax sizes HTTPClient's pool of keep-alive connections.
	IdleConnsMax int
	// ReadyTimeout bounds the wait for readiness; 90 s when zero.
	ReadyTimeout time.Duration
	// OnStart, when set, is called with the pid as soon as a process has
	// started, before the wait for readiness (to sample it from the start).
	OnStart func(pid int)
}

// Gateway is a `gateway serve` process, restartable on its ports (clients
// keep their address across a restart).
type Gateway struct {
	cfg                GatewayConfig
	port, internalPort int

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	exitErr error
	starts  int
	hc      *http.Client
}

// NewGateway reserves the ports of a gateway; Start runs it.
func NewGateway(cfg GatewayConfig) (*Gateway, error) {
	p, err := FreePort()
	if err != nil {
		return nil, err
	}
	ip, err := FreePort()
	if err != nil {
		return nil, err
	}
	if cfg.ReadyTimeout <= 0 {
		cfg.ReadyTimeout = 90 * time.Second
	}
	for _, dir := range []string{cfg.DataDir, filepath.Dir(cfg.LogPath)} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	return &Gateway{cfg: cfg, port: p, internalPort: ip}, nil
}

// Addr and InternalAddr are host:port of the two listeners.
func (g *Gateway) Addr() string         { return "127.0.0.1:" + strconv.Itoa(g.port) }
func (g *Gateway) InternalAddr() string { return "127.0.0.1:" + strconv.Itoa(g.internalPort) }

func (g *Gateway) scheme() string {
	if g.cfg.PlainHTTP {
		return "http"
	}
	return "https"
}

// BaseURL and InternalURL are the listeners' URLs.
func (g *Gateway) BaseURL() string     { return g.scheme() + "://" + g.Addr() }
func (g *Gateway) InternalURL() string { return g.scheme() + "://" + g.InternalAddr() }

// Name is the process's name; LogPath its log.
func (g *Gateway) Name() string    { return g.cfg.Name }
func (g *Gateway) LogPath() string { return g.cfg.LogPath }

// Env is the process's environment: the base, the settings, then Env.
func (g *Gateway) Env() []string {
	base := g.cfg.BaseEnv
	if base == nil {
		base = MinimalEnv()
	}
	env := append(append([]string(nil), base...),
		"DATABASE_URL="+g.cfg.DatabaseURL,
		// The harness's own cluster's superuser (docs/security.md).
		"DATABASE_ALLOW_SUPERUSER=1",
		"GATEWAY_DATA_DIR="+g.cfg.DataDir,
		"GATEWAY_DATA_KEY="+g.cfg.DataKey,
		"GATEWAY_ADDR="+g.Addr(),
		"GATEWAY_INTERNAL_ADDR="+g.InternalAddr(),
		"GATEWAY_INTERNAL_TOKEN="+g.cfg.InternalToken,
		// No web console: these programs drive the API only.
		"GATEWAY_CONSOLE_ADDR=off",
		"GATEWAY_CALLBACK_ALLOW_PRIVATE=true",
		// The per-merchant rate limit (200 requests/s by default) would cap
		// the load: these programs measure capacity and break things.
		"GATEWAY_RATE_LIMIT_RPS=off",
		// Every client is 127.0.0.1: the per-client bound of connections
		// would count them as one.
		"GATEWAY_CONNS_PER_CLIENT_MAX=off",
	)
	if g.cfg.PlainHTTP {
		env = append(env, "GATEWAY_PLAIN_HTTP=true")
	}
	return append(env, g.cfg.Env...)
}

// Start runs the gateway (again) and waits until it is ready: /readyz
// answers 200, so it serves and its database answers.
func (g *Gateway) Start(ctx context.Context) error {
	logf, err := os.OpenFile(g.cfg.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	g.mu.Lock()
	n := g.starts + 1
	g.mu.Unlock()
	fmt.Fprintf(logf, "=== start %d at %s\n", n, time.Now().Format(time.RFC3339Nano))
	// Not CommandContext: the gateway is stopped with SIGTERM, in order.
	cmd := exec.Command(g.cfg.Bin, "serve")
	cmd.Env = g.Env()
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so that Ctrl-C reaches only this program,
	// which stops the gateway in order; and it dies with this program,
	// whatever happens to it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	exited := make(chan struct{})
	go func() {
		err := cmd.Wait()
		logf.Close()
		g.mu.Lock()
		g.exitErr = err
		g.mu.Unlock()
		close(exited)
	}()
	g.mu.Lock()
	g.cmd, g.exited = cmd, exited
	g.starts = n
	g.mu.Unlock()
	if g.cfg.OnStart != nil {
		g.cfg.OnStart(cmd.Process.Pid)
	}
	return g.waitReady(ctx, exited)
}

func (g *Gateway) waitReady(ctx context.Context, exited chan struct{}) error {
	deadline := time.Now().Add(g.cfg.ReadyTimeout)
	probe := &http.Client{Timeout: 2 * time.Second}
	for {
		select {
		case <-exited:
			return fmt.Errorf("%s exited during start-up (%v); its log ends:\n%s", g.cfg.Name, g.exitError(), TailFile(g.cfg.LogPath, 20))
		case <-ctx.Done():
			g.Stop()
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if hc := g.HTTPClient(); hc != nil {
			probe.Transport = hc.Transport
			if resp, err := probe.Get(g.BaseURL() + "/readyz"); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			g.Stop()
			return fmt.Errorf("%s was not ready within %s; its log ends:\n%s", g.cfg.Name, g.cfg.ReadyTimeout, TailFile(g.cfg.LogPath, 20))
		}
	}
}

// HTTPClient is the one client every caller of this gateway shares:
// keep-alive connections, and over HTTPS its self-signed certificate as
// the only root (pinned). nil until the certificate exists.
func (g *Gateway) HTTPClient() *http.Client {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.hc != nil {
		return g.hc
	}
	var roots *x509.CertPool
	if !g.cfg.PlainHTTP {
		pem, err := os.ReadFile(filepath.Join(g.cfg.DataDir, "tls", "cert.pem"))
		if err != nil {
			return nil
		}
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil
		}
	}
	g.hc = client.NewHTTPClient(roots, 2*g.cfg.IdleConnsMax+16)
	return g.hc
}

// ShopClient is a /shop client of a merchant on this gateway.
func (g *Gateway) ShopClient(shopNo, publicKey string, retry client.RetryPolicy) (*client.Client, error) {
	return client.New(client.Config{BaseURL: g.BaseURL(), ShopNo: shopNo, PublicKey: publicKey, HTTPClient: g.HTTPClient(), Retry: retry})
}

// NetClient is a client of this gateway's internal API.
func (g *Gateway) NetClient(retry client.RetryPolicy) (*netclient.Client, error) {
	return netclient.New(netclient.Config{BaseURL: g.InternalURL(), Token: g.cfg.InternalToken, HTTPClient: g.HTTPClient(), Retry: retry})
}

func (g *Gateway) exitError() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.exitErr
}

// Exited is an error when the process started last has exited (with the end
// of its log), else nil.
func (g *Gateway) Exited() error {
	g.mu.Lock()
	exited := g.exited
	g.mu.Unlock()
	if exited == nil {
		return fmt.Errorf("%s was never started", g.cfg.Name)
	}
	select {
	case <-exited:
		return fmt.Errorf("%s exited (%v); the end of %s:\n%s", g.cfg.Name, g.exitError(), g.cfg.LogPath, TailFile(g.cfg.LogPath, 20))
	default:
		return nil
	}
}

// Alive reports whether the process started last still runs, and its pid.
func (g *Gateway) Alive() (bool, int) {
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

// Starts counts the starts so far.
func (g *Gateway) Starts() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.starts
}

// Kill sends SIGKILL (kill -9) and waits for the process to be gone.
func (g *Gateway) Kill() {
	g.mu.Lock()
	cmd, exited := g.cmd, g.exited
	g.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

// Stop asks for a clean shutdown (SIGTERM), then kills after 20 s.
func (g *Gateway) Stop() {
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
