package app

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestPprofOnlyOnLoopback(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.DiscardHandler)
	for _, addr := range []string{"0.0.0.0:6060", ":6060", "10.0.0.1:6060", "localhost:6060", "nonsense"} {
		if stop, err := startPprof(log, addr); err == nil {
			stop()
			t.Errorf("GATEWAY_PPROF_ADDR=%q was accepted", addr)
		}
	}
	stop, err := startPprof(log, "")
	if err != nil {
		t.Fatalf("empty address: %v", err)
	}
	stop()
}

func TestPprofServesProfiles(t *testing.T) {
	t.Parallel()
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	stop, err := startPprof(log, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	// The log line names the address actually bound (port 0 picks one).
	_, after, ok := strings.Cut(logs.String(), "addr=")
	if !ok {
		t.Fatalf("no address logged: %q", logs.String())
	}
	addr := strings.Fields(after)[0]
	resp, err := httpGet("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "goroutine profile") {
		t.Fatalf("%d %.200s", resp.StatusCode, body)
	}
}

func httpGet(url string) (*http.Response, error) {
	c := &http.Client{Timeout: 10 * time.Second}
	return c.Get(url) //nolint:noctx // a test against a local listener
}
