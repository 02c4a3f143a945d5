package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/pgha"
	"github.com/paygate/gateway/internal/pgha/pghatest"
)

// formationEnv runs the formation tests (make test-ha): a minute or more
// of most of two cores.
const formationEnv = "GATEWAY_TEST_FORMATION"

// `ha run` on a real formation with the real gateway (issue 31): a keeper
// killed is run again by the supervisor and its node is back as the
// standby; the node's server log is outside PGDATA; `ha restore` to a
// moment a second old (inside archive_timeout) with a wrong data key is
// refused and leaves nothing behind, and the retry with the database's key
// works; Ctrl-C (the context's end) leaves no server listening.
func TestSuperviseRestoreAndStop(t *testing.T) {
	if os.Getenv(formationEnv) == "" {
		t.Skipf("set %s=1 (make test-ha) to run the pg_auto_failover formation", formationEnv)
	}
	pghatest.NeedTool(t, pgha.FindPgAutoctl)
	pghatest.NeedTool(t, pgha.FindPgBackRest)
	root := pghatest.Dir(t)
	bin := filepath.Join(root, "gateway")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/paygate/gateway/cmd/gateway").CombinedOutput(); err != nil {
		t.Fatalf("building the gateway: %v\n%s", err, out)
	}
	dir, gwDir := filepath.Join(root, "ha"), filepath.Join(root, "gw")
	ports, err := pgha.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"GATEWAY_ADDR": "127.0.0.1:0", "GATEWAY_INTERNAL_ADDR": "127.0.0.1:0",
		"GATEWAY_CONSOLE_ADDR": "off", "GATEWAY_DATA_DIR": gwDir, "GATEWAY_DATA_KEY": "", "GATEWAY_LOG_LEVEL": "warn"} {
		t.Setenv(k, v)
	}
	os.Unsetenv("GATEWAY_DATA_KEY")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var out lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(runCtx, []string{"run", "-dir", dir, "-gateway", bin, "-ports",
			strconv.Itoa(ports[0]) + "," + strconv.Itoa(ports[1]) + "," + strconv.Itoa(ports[2])}, &out, &out)
	}()
	defer func() { t.Logf("ha run's output:\n%s", out.String()) }()
	waitUntil(t, ctx, done, "the gateway listening", func() bool { return strings.Contains(out.String(), "listening on") })

	f, err := pgha.OpenFormation(dir)
	if err != nil {
		t.Fatal(err)
	}
	gateway := func(args ...string) string {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), "DATABASE_URL="+f.URL("gateway"))
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("gateway %v: %v\n%s", args, err, b)
		}
		return string(b)
	}
	gateway("merchant", "create", "--name", "Before the backup", "--currencies", "USD")
	repo, err := pgha.OpenRepo(filepath.Join(f.Dir(), "backup"))
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Backup(ctx, "full"); err != nil {
		t.Fatal(err)
	}
	gateway("merchant", "create", "--name", "After the backup", "--currencies", "USD")
	db, err := sql.Open("pgx", f.URL("gateway"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var target time.Time
	if err := db.QueryRowContext(ctx, "select clock_timestamp()").Scan(&target); err != nil {
		t.Fatal(err)
	}

	// Finding 4: the standby's keeper dies (its whole process group) and
	// is run again.
	st, err := f.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := st.Primary()
	var standby *pgha.Keeper
	for _, n := range f.Nodes {
		if n.Name != p.Name {
			standby = n
		}
	}
	pid := keeperPID(standby.PGData)
	if pid == 0 {
		t.Fatalf("no keeper runs for %s", standby.PGData)
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, ctx, done, "the keeper run again", func() bool {
		n := keeperPID(standby.PGData)
		return n != 0 && n != pid
	})
	if err := f.WaitState(ctx, standby.Name, "secondary"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "the keeper of "+standby.Name+" exited; restarting it") {
		t.Errorf("the restart was not reported")
	}
	// Finding 6: the server's log is the keeper's, beside PGDATA.
	if _, err := os.Stat(filepath.Join(standby.PGData, "log")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s/log exists (%v): the server logs inside PGDATA", standby.PGData, err)
	}
	if b, _ := os.ReadFile(standby.LogPath()); !bytes.Contains(b, []byte("database system is ready to accept")) {
		t.Errorf("%s holds none of PostgreSQL's own lines", standby.LogPath())
	}

	// Finding 3 and point 2: a restore to a moment a second old.
	into := filepath.Join(root, "ha-restore-"+target.UTC().Format("20060102T150405Z"))
	wrong := filepath.Join(root, "wrong.key")
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	if err := os.WriteFile(wrong, []byte(hex.EncodeToString(k)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	moment := target.UTC().Format("2006-01-02 15:04:05.999999-07")
	var rout lockedBuffer
	err = run(ctx, []string{"restore", "-dir", dir, "-target", moment, "-key", wrong, "-gateway", bin}, &rout, &rout)
	if err == nil || !strings.Contains(err.Error(), "is not the restored database's") {
		t.Fatalf("restore with another key: %v, want a refusal naming the key\n%s", err, rout.String())
	}
	if _, err := os.Stat(into); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the failed restore left %s (%v)", into, err)
	}
	rout.Reset()
	if err := run(ctx, []string{"restore", "-dir", dir, "-target", moment, "-key", filepath.Join(gwDir, "data.key"), "-gateway", bin}, &rout, &rout); err != nil {
		t.Fatalf("restore with the key: %v\n%s", err, rout.String())
	}
	if !strings.Contains(rout.String(), "2 merchants") {
		t.Errorf("the restore's audit verify does not show both merchants:\n%s", rout.String())
	}

	// Ctrl-C: everything it started stops, the restarted keeper too.
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ha run: %v", err)
		}
	case <-time.After(5 * time.Minute):
		t.Fatal("ha run did not stop")
	}
	for _, port := range ports {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second); err == nil {
			c.Close()
			t.Errorf("a server still listens on %d after ha run stopped", port)
		}
	}
	for _, n := range append(f.Nodes, f.Monitor) {
		if keeperPID(n.PGData) != 0 {
			t.Errorf("the keeper of %s still runs", n.Name)
		}
	}
}

// keeperPID is the pid of the `pg_autoctl run --pgdata pgdata` process, 0
// when none runs.
func keeperPID(pgdata string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) >= 4 && filepath.Base(args[0]) == "pg_autoctl" && args[1] == "run" && args[2] == "--pgdata" && args[3] == pgdata {
			return pid
		}
	}
	return 0
}

// waitUntil waits for cond, failing when ha run ends first or ctx ends.
func waitUntil(t *testing.T, ctx context.Context, done <-chan error, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case err := <-done:
			t.Fatalf("ha run ended (%v) before %s", err, what)
		case <-ctx.Done():
			t.Fatalf("no %s: %v", what, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// lockedBuffer is a bytes.Buffer that ha run and the gateway it starts
// write to at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuffer) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Reset()
}
