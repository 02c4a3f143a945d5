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
// works; the schedule takes its first backup at once, into an encrypted
// repository; Ctrl-C (the context's end) leaves no server listening.
func TestSuperviseRestoreAndStop(t *testing.T) {
	root, bin := formationTest(t)
	dir, gwDir := filepath.Join(root, "ha"), filepath.Join(root, "gw")
	ports, err := pgha.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	gatewayTestEnv(t, gwDir)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var out lockedBuffer
	var runErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Two data nodes (the default is three): what this test checks
		// does not depend on the third, and the machine is shared.
		runErr = run(runCtx, []string{"run", "-dir", dir, "-gateway", bin, "-nodes", "2", "-ports",
			strconv.Itoa(ports[0]) + "," + strconv.Itoa(ports[1]) + "," + strconv.Itoa(ports[2])}, &out, &out)
	}()
	// However the test ends, ha run is stopped and waited for: what it
	// started must not outlive the test.
	t.Cleanup(func() {
		stop()
		select {
		case <-done:
		case <-time.After(5 * time.Minute):
			t.Errorf("ha run did not stop")
		}
		t.Logf("ha run's output:\n%s", out.String())
	})
	waitUntil(ctx, t, done, "the gateway listening", func() bool { return strings.Contains(out.String(), "listening on") })

	f, err := pgha.OpenFormation(dir)
	if err != nil {
		t.Fatal(err)
	}
	gateway := func(args ...string) string {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), "DATABASE_URL="+f.URL("gateway"), "DATABASE_ALLOW_SUPERUSER=1")
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
	// The schedule (-backup-every, a day) takes a full backup at once into
	// the empty repository, which is encrypted (issue 31, point 4).
	waitUntil(ctx, t, done, "the scheduled full backup", func() bool {
		return strings.Contains(out.String(), "ha: scheduled full backup done")
	})
	if c, err := repo.Cipher(ctx); err != nil || c != "aes-256-cbc" {
		t.Errorf("the formation's repository's cipher is %q (%v), want aes-256-cbc", c, err)
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
	// Least privilege (docs/security.md, 13): ha run's gateway serves as
	// gateway_app, never as the postgres superuser.
	var users []string
	rows, err := db.QueryContext(ctx, `select distinct usename::text from pg_stat_activity
		where application_name = 'gateway' and datname = 'gateway' and pid <> pg_backend_pid()`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			t.Fatal(err)
		}
		users = append(users, u)
	}
	rows.Close()
	if len(users) != 1 || users[0] != appRole {
		t.Errorf("ha run's gateway connects as %v, want only %s", users, appRole)
	}
	// TLS with the formation's CA (docs/ha.md): the gateway's connections
	// and the standby's replication connection are encrypted, and the URL
	// verifies the server against that CA.
	if !strings.Contains(f.URL("gateway"), "sslmode=verify-full") || f.CAFile() == "" {
		t.Errorf("the formation's URL %s does not verify the server", f.URL("gateway"))
	}
	var plain int
	if err := db.QueryRowContext(ctx, `select count(*) from pg_stat_activity a join pg_stat_ssl s using (pid)
		where not s.ssl and (a.application_name = 'gateway' or a.backend_type = 'walsender')`).Scan(&plain); err != nil {
		t.Fatal(err)
	}
	var walsenders int
	if err := db.QueryRowContext(ctx, `select count(*) from pg_stat_replication r join pg_stat_ssl s using (pid) where s.ssl`).Scan(&walsenders); err != nil {
		t.Fatal(err)
	}
	if plain != 0 || walsenders != 1 {
		t.Errorf("%d of the gateway's and replication's connections are without TLS, %d replication connections with it; want 0 and 1", plain, walsenders)
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
	keeperPID := func(k *pgha.Keeper) int { return keeperPID(f.Dir(), k.PGData) }
	pid := keeperPID(standby)
	if pid == 0 {
		t.Fatalf("no keeper runs for %s", standby.PGData)
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitUntil(ctx, t, done, "the keeper run again", func() bool {
		n := keeperPID(standby)
		return n != 0 && n != pid
	})
	if err := f.WaitState(ctx, standby.Name, "secondary"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "the keeper of "+standby.Name+" exited; restarting it") {
		t.Errorf("the restart was not reported")
	}
	// Finding 6: each node's server log is beside PGDATA, where pg_rewind
	// does not reach.
	for _, n := range f.Nodes {
		ndb, err := sql.Open("pgx", f.NodeURL(n, "postgres"))
		if err != nil {
			t.Fatal(err)
		}
		// The monitor may report the restarted node secondary before its
		// server answers again.
		var logFile string
		waitUntil(ctx, t, done, n.Name+" answering", func() bool {
			return ndb.QueryRowContext(ctx, "select pg_current_logfile()").Scan(&logFile) == nil
		})
		ndb.Close()
		if !strings.HasPrefix(logFile, f.NodeLogDir()+"/") {
			t.Errorf("%s logs into %q, want a file of %s", n.Name, logFile, f.NodeLogDir())
		}
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
	case <-done:
		if runErr != nil {
			t.Errorf("ha run: %v", runErr)
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
		if keeperPID(n) != 0 {
			t.Errorf("the keeper of %s still runs", n.Name)
		}
	}
}

// formationTest skips t unless formationEnv is set and the tools are
// installed, and returns its directory and a gateway binary built there.
func formationTest(t *testing.T) (root, bin string) {
	t.Helper()
	if os.Getenv(formationEnv) == "" {
		t.Skipf("set %s=1 (make test-ha) to run the pg_auto_failover formation", formationEnv)
	}
	pghatest.NeedTool(t, pgha.FindPgAutoctl)
	pghatest.NeedTool(t, pgha.FindPgBackRest)
	root = pghatest.Dir(t)
	bin = filepath.Join(root, "gateway")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/paygate/gateway/cmd/gateway").CombinedOutput(); err != nil {
		t.Fatalf("building the gateway: %v\n%s", err, out)
	}
	return root, bin
}

// gatewayTestEnv is the environment of the gateways ha run starts in a
// test: loopback on free ports, no console, the data directory gwDir and
// its key (never one the shell holds).
func gatewayTestEnv(t *testing.T, gwDir string) {
	t.Helper()
	for k, v := range map[string]string{"GATEWAY_ADDR": "127.0.0.1:0", "GATEWAY_INTERNAL_ADDR": "127.0.0.1:0",
		"GATEWAY_CONSOLE_ADDR": "off", "GATEWAY_DATA_DIR": gwDir, "GATEWAY_DATA_KEY": "", "GATEWAY_LOG_LEVEL": "warn"} {
		t.Setenv(k, v)
	}
	os.Unsetenv("GATEWAY_DATA_KEY")
}

// keeperPID is the pid of the keeper of pgdata in the formation of dir
// (its pid file under XDG_RUNTIME_DIR, which the formation puts in
// dir/run), 0 when none runs.
func keeperPID(dir, pgdata string) int {
	b, err := os.ReadFile(filepath.Join(dir, "run", "pg_autoctl", pgdata, "pg_autoctl.pid"))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil || pid <= 1 || syscall.Kill(pid, 0) != nil {
		return 0
	}
	return pid
}

// waitUntil waits for cond, failing when ha run ends first or ctx ends.
func waitUntil(ctx context.Context, t *testing.T, done <-chan struct{}, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-done:
			t.Fatalf("ha run ended before %s", what)
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
