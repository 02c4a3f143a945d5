package main

// Every listener a test starts takes a free port (port 0), never a default
// one: a test that bound 127.0.0.1:8445 failed whenever the user's own
// `make run` held it (issue 28 point 6). The helper below gives each
// command a test runs every listener address it did not set itself, so
// that no test can forget one — including a listener added to
// internal/config later. internal/archtest's port rule checks the
// environments tests write out by hand.

import (
	"log/slog"
	"net"
	"slices"
	"testing"

	"github.com/paygate/gateway/internal/config"
)

// freeListenAddr is what a test's listener binds: loopback, port 0.
const freeListenAddr = "127.0.0.1:0"

// fixedPortSettings are the settings whose default is a listen address
// with a fixed port (GATEWAY_ADDR 127.0.0.1:8443, …): read from
// internal/config's defaults, so a new listener is covered without a
// change here.
var fixedPortSettings = func() map[string]bool {
	out := map[string]bool{}
	for _, a := range config.Default().Attrs() {
		if a.Key != "settings" || a.Value.Kind() != slog.KindGroup {
			continue
		}
		for _, s := range a.Value.Group() {
			if _, port, err := net.SplitHostPort(s.Value.String()); err == nil && port != "0" {
				out[s.Key] = true
			}
		}
	}
	return out
}()

// getenv is the installation's environment as a command sees it: the
// test's settings, and a free port for every listener the test left
// unset.
func (g *gateway) getenv(name string) string {
	if v, ok := g.env[name]; ok {
		return v
	}
	if fixedPortSettings[name] {
		return freeListenAddr
	}
	return ""
}

// The defaults that must never reach a test are found: if reading them
// broke, the helper would silently hand out the fixed ports again.
func TestFixedPortSettingsAreFound(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"GATEWAY_ADDR", "GATEWAY_INTERNAL_ADDR", "GATEWAY_CONSOLE_ADDR"} {
		if !fixedPortSettings[name] {
			t.Errorf("%s is not among the settings with a fixed default port %v", name, keys(fixedPortSettings))
		}
	}
	g := &gateway{t: t, env: map[string]string{}}
	g.env["GATEWAY_ADDR"] = "[::1]:0"
	if got := g.getenv("GATEWAY_CONSOLE_ADDR"); got != freeListenAddr {
		t.Errorf("an unset console address reads %q, want %q", got, freeListenAddr)
	}
	if got := g.getenv("GATEWAY_ADDR"); got != "[::1]:0" {
		t.Errorf("the test's own address reads %q", got)
	}
	if got := g.getenv("GATEWAY_LOG_LEVEL"); got != "" {
		t.Errorf("an unset setting that is no listener reads %q", got)
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
