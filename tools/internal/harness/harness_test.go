package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The environment a gateway gets: only PATH and HOME of the caller's unless
// told otherwise, its settings, and the caller's extras last, so that they
// win (os/exec keeps the last of a repeated variable).
func TestGatewayEnv(t *testing.T) {
	t.Setenv("HARNESS_TEST_SECRET", "must-not-leak")
	dir := t.TempDir()
	g, err := NewGateway(GatewayConfig{Bin: "/bin/false", Name: "t", DataDir: filepath.Join(dir, "data"), LogPath: filepath.Join(dir, "logs", "t.log"),
		DatabaseURL: "postgres://x", DataKey: "00", InternalToken: "tok", PlainHTTP: true, Env: []string{"GATEWAY_RATE_LIMIT_RPS=50"}})
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Join(g.Env(), "\n")
	for _, want := range []string{"DATABASE_URL=postgres://x", "GATEWAY_ADDR=" + g.Addr(), "GATEWAY_INTERNAL_ADDR=" + g.InternalAddr(),
		"GATEWAY_CONSOLE_ADDR=off", "GATEWAY_PLAIN_HTTP=true", "GATEWAY_CONNS_PER_CLIENT_MAX=off"} {
		if !strings.Contains(env, want+"\n") && !strings.HasSuffix(env, want) {
			t.Errorf("env lacks %s:\n%s", want, env)
		}
	}
	if strings.Contains(env, "must-not-leak") {
		t.Error("the caller's environment leaked into the minimal one")
	}
	if i, j := strings.LastIndex(env, "GATEWAY_RATE_LIMIT_RPS=off"), strings.LastIndex(env, "GATEWAY_RATE_LIMIT_RPS=50"); j < i {
		t.Error("the caller's setting does not come last")
	}
	if g.Addr() == g.InternalAddr() || !strings.HasPrefix(g.BaseURL(), "http://127.0.0.1:") {
		t.Errorf("addresses %s %s", g.BaseURL(), g.InternalURL())
	}
	if g.HTTPClient() == nil {
		t.Error("no client over plain HTTP")
	}
	// A process that exits at once is reported with its log, not waited for.
	if err := g.Start(t.Context()); err == nil || !strings.Contains(err.Error(), "exited during start-up") {
		t.Errorf("Start of /bin/false: %v", err)
	}
	if alive, _ := g.Alive(); alive || g.Starts() != 1 || g.Exited() == nil {
		t.Errorf("after the exit: alive %v, %d starts, %v", alive, g.Starts(), g.Exited())
	}
	if !strings.Contains(TailFile(g.LogPath(), 5), "=== start 1") {
		t.Errorf("log %q", TailFile(g.LogPath(), 5))
	}
}

func TestTailFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	_ = os.WriteFile(p, []byte("a\nb\nc\nd\n"), 0o644)
	if got := TailFile(p, 2); got != "c\nd" {
		t.Errorf("TailFile = %q", got)
	}
	if got := TailFile(filepath.Join(t.TempDir(), "none"), 2); got != "" {
		t.Errorf("missing file: %q", got)
	}
}
