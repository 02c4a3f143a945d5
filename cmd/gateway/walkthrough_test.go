package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/doctest"
)

// TestWalkthroughRuns runs docs/walkthrough.md as a reader would: every
// shell block in order, in one bash, from a directory that looks like a
// checkout after `make run` (bin/gateway, var/ with the demo merchant, the
// certificate and the gateway's data), and compares each block's output
// with the answer the page shows after it (internal/doctest says how ids
// and times are matched). The gateway is this test's own `serve --demo`
// on free ports, in place of the page's `make run`; the page's callbacks go
// to a receiver on a free port the test picks ($RECEIVER_ADDR).
func TestWalkthroughRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the walkthrough runs against a real gateway (make test runs it)")
	}
	for _, tool := range []string{"bash", "curl", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the walkthrough needs %s (docs/walkthrough.md says so): %v", tool, err)
		}
	}
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "walkthrough.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := doctest.Parse(string(page))
	if err != nil {
		t.Fatal(err)
	}
	dir := walkthroughCheckout(t)

	g := newGateway(t)
	g.env["GATEWAY_DATA_DIR"] = filepath.Join(dir, "var")
	g.env["GATEWAY_CALLBACK_ALLOW_PRIVATE"] = "true" // the page's webhook section restarts make run with it
	s := g.serve("--demo")
	defer s.mustStop()
	// The page's network commands reach the internal API at its default
	// address under make run; here it is where serve says.
	internal := internalAPIRe.FindStringSubmatch(s.stdout.String())
	if internal == nil {
		t.Fatalf("serve printed no internal API address:\n%s", s.stdout)
	}

	ctx, cancel := context.WithTimeout(context.Background(), walkthroughBound(t))
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(doctest.Script(blocks))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C.UTF-8", "TZ=UTC",
		"DATABASE_URL=" + g.env["DATABASE_URL"], "DATABASE_ALLOW_SUPERUSER=1", "GATEWAY_LOG_LEVEL=warn",
		// The page's commands listen on nothing; the listener settings are
		// the test's anyway, so that no command could take a fixed port.
		"GATEWAY_ADDR=127.0.0.1:0", "GATEWAY_CONSOLE_ADDR=127.0.0.1:0",
		"GATEWAY_INTERNAL_ADDR=" + internal[1], "RECEIVER_ADDR=" + freeLoopbackAddr(t)}
	cmd.WaitDelay = 5 * time.Second // the page's background receiver may hold the output open
	// Its own process group, so that whatever the page left running in
	// the background is stopped with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.Output()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err != nil && ctx.Err() != nil {
		t.Fatalf("the walkthrough did not finish in time: %v\n%s", err, out)
	}
	outs := doctest.Split(string(out), len(blocks))
	if len(outs) < len(blocks) {
		t.Errorf("the shell stopped in the block of line %d (%d of %d blocks ran): %v", blocks[len(outs)-1].Line, len(outs), len(blocks), err)
	}
	update := map[int]string{}
	for i, got := range outs {
		b := blocks[i]
		if !b.HasOut {
			continue
		}
		re, err := doctest.Pattern(b.Expected)
		if err != nil {
			t.Errorf("docs/walkthrough.md:%d: the expected output does not compile: %v", b.Line, err)
			continue
		}
		if !re.MatchString(got) {
			update[i] = got
			t.Errorf("docs/walkthrough.md:%d: the block printed\n%s\nthe page shows\n%s", b.Line, got, b.Expected)
		}
	}
	// DOCS_UPDATE=1 writes what the blocks printed into the page,
	// for a person to read in the diff (trim long answers with …).
	if len(update) > 0 && os.Getenv("DOCS_UPDATE") == "1" {
		path := filepath.Join("..", "..", "docs", "walkthrough.md")
		if err := os.WriteFile(path, []byte(doctest.Rewrite(string(page), blocks, update)), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %d answers into %s", len(update), path)
	}
}

// walkthroughBound is how long the page's script may run: a bound for a
// hung script only, so as long as the test binary's own -timeout leaves,
// less a minute for the test to say which block hung (a run under load 30
// on 2 cores took 465 s of the 600 s the fixed bound gave it); 20 minutes
// when the binary has no deadline.
func walkthroughBound(t *testing.T) time.Duration {
	deadline, ok := t.Deadline()
	if !ok {
		return 20 * time.Minute
	}
	return max(time.Until(deadline)-time.Minute, time.Minute)
}

var internalAPIRe = regexp.MustCompile(`internal network API on https://(\S+)`)

// walkthroughCheckout is a directory the page's commands run in as if at
// the root of a checkout: bin/gateway built from this package, and the
// module's go.mod, go.sum and api/ linked, for the page's `go build` of the
// example receiver. Its var/ is the test gateway's data directory.
func walkthroughCheckout(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"go.mod", "go.sum", "api"} {
		if err := os.Symlink(filepath.Join(root, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "bin", "gateway"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}

// freeLoopbackAddr is a loopback address with a port free a moment ago,
// for a process the test does not start itself (the page's receiver).
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
