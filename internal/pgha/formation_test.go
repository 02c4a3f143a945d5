package pgha_test

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/pgha"
	"github.com/paygate/gateway/internal/pgha/pghatest"
)

// FormationEnv runs the formation test: three servers and three keepers
// take about a minute to create and most of two cores, so it runs in
// `make test-ha`, not in `make test` (docs/ha.md).
const FormationEnv = "GATEWAY_TEST_FORMATION"

// A pg_auto_failover formation (monitor, two nodes, WAL archived by
// pgBackRest) loses its primary to SIGKILL of its keeper and PostgreSQL:
// the monitor promotes the standby, writes through the multi-host URL
// resume, nothing acknowledged is lost, the killed node rejoins as the
// standby when its keeper runs again, and a backup is taken from the new
// primary with its WAL archived.
func TestFormationFailover(t *testing.T) {
	if os.Getenv(FormationEnv) == "" {
		t.Skipf("set %s=1 (make test-ha) to run the pg_auto_failover formation", FormationEnv)
	}
	pghatest.NeedTool(t, pgha.FindPgAutoctl)
	pghatest.NeedTool(t, pgha.FindPgBackRest)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := pghatest.Dir(t)
	repo, err := pgha.NewRepo(filepath.Join(dir, "backup"), nil)
	if err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	f, err := pgha.StartFormation(ctx, pgha.FormationOptions{Dir: filepath.Join(dir, "ha"), Repo: repo, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)
	t.Logf("formation created in %s", time.Since(created).Round(time.Millisecond))

	db, err := sql.Open("pgx", f.URL("gateway"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "create table acks (id int primary key)"); err != nil {
		t.Fatal(err)
	}
	acked := 0
	write := func(wctx context.Context) error {
		_, err := db.ExecContext(wctx, "insert into acks values ($1)", acked+1)
		if err == nil {
			acked++
		}
		return err
	}
	for i := 0; i < 20; i++ {
		if err := write(ctx); err != nil {
			t.Fatal(err)
		}
	}
	st, err := f.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := st.Primary()
	if !ok {
		t.Fatalf("no primary: %v", st)
	}
	old := f.Node(p.Name)

	killed := time.Now()
	f.Kill(old)
	var firstWrite time.Duration
	failures := 0
	for {
		wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
		err := write(wctx)
		wcancel()
		if err == nil {
			firstWrite = time.Since(killed)
			break
		}
		failures++
		if ctx.Err() != nil {
			t.Fatalf("no write succeeded after the primary was killed: %v\n%v", err, st)
		}
		time.Sleep(100 * time.Millisecond)
	}
	st, _ = f.State(ctx)
	t.Logf("primary %s killed: first successful write after %s (%d failed tries); state:\n%v", old.Name, firstWrite.Round(time.Millisecond), failures, st)

	restarted := time.Now()
	if err := f.Restart(old); err != nil {
		t.Fatal(err)
	}
	if err := f.WaitState(ctx, old.Name, "secondary"); err != nil {
		t.Fatal(err)
	}
	rejoin := time.Since(restarted)
	var n int
	if err := db.QueryRowContext(ctx, "select count(*) from acks").Scan(&n); err != nil || n != acked {
		t.Fatalf("%d rows after the failover, %d acknowledged (%v)", n, acked, err)
	}
	backupStart := time.Now()
	if err := repo.Backup(ctx, "full"); err != nil {
		t.Fatal(err)
	}
	st, _ = f.State(ctx)
	t.Logf("%s rejoined as secondary %s after its keeper restarted; full backup from the new primary %s; state:\n%v",
		old.Name, rejoin.Round(time.Millisecond), time.Since(backupStart).Round(time.Millisecond), st)
}

type testLog struct{ t *testing.T }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// A node's server log is kept out of its data directory: the settings
// appended to postgresql.conf (after pg_autoctl's include, so they win) put
// log_directory beside PGDATA, where pg_rewind does not replace it at a
// rejoin, and make that directory (issue 31, finding 6).
// TestSuperviseRestoreAndStop (cmd/ha) checks a running formation's.
func TestNodeLogOutsidePGDATA(t *testing.T) {
	dir := t.TempDir()
	pgdata := filepath.Join(dir, "data", "node1")
	if err := os.MkdirAll(pgdata, 0o700); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(pgdata, "postgresql.conf")
	if err := os.WriteFile(conf, []byte("include 'postgresql-auto-failover.conf'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logDir, err := pgha.WriteNodeSettingsForTest(dir, pgdata)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{"logging_collector = 'on'", "log_directory = '" + logDir + "'"} {
		if i := strings.Index(got, want); i < strings.Index(got, "include 'postgresql-auto-failover.conf'") {
			t.Errorf("postgresql.conf lacks %q after pg_autoctl's include:\n%s", want, got)
		}
	}
	if !filepath.IsAbs(logDir) || strings.HasPrefix(logDir, pgdata+string(filepath.Separator)) {
		t.Errorf("log directory %s is inside PGDATA %s", logDir, pgdata)
	}
	if st, err := os.Stat(logDir); err != nil || !st.IsDir() {
		t.Errorf("log directory %s not made: %v", logDir, err)
	}
}

// The formation's URL gives each host connect_timeout=5, docs/ha.md's
// advice for a loaded machine (issue 31, finding 4: it was 2), and asks for
// verify-full with the formation's CA when its servers were made with TLS
// (docs/ha.md, "Authentication and TLS of the formation") and names the
// formation's password file when they take passwords; a formation made
// before keeps its plain connections.
func TestFormationURLConnectTimeout(t *testing.T) {
	pghatest.NeedTool(t, pgha.FindPgAutoctl)
	const base = "postgres://postgres@127.0.0.1:25431,127.0.0.1:25432/gateway?target_session_attrs=read-write&connect_timeout=5&"
	for _, tt := range []struct {
		name, tls string
		want      func(dir string) string
	}{
		{"made before TLS", "", func(string) string { return base + "sslmode=disable" }},
		{"with TLS", `, "tls": true`, func(dir string) string {
			return base + "sslmode=verify-full&sslrootcert=" + url.QueryEscape(filepath.Join(dir, "tls", "ca.crt"))
		}},
		{"with TLS and passwords", `, "tls": true, "scram": true`, func(dir string) string {
			return base + "sslmode=verify-full&sslrootcert=" + url.QueryEscape(filepath.Join(dir, "tls", "ca.crt")) +
				"&passfile=" + url.QueryEscape(filepath.Join(dir, "auth", "pgpass"))
		}},
	} {
		dir := t.TempDir()
		ff := `{"monitorPort": 25430, "nodePorts": [25431, 25432], "dbName": "gateway"` + tt.tls + `}`
		if err := os.WriteFile(filepath.Join(dir, "formation.json"), []byte(ff), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := pgha.OpenFormation(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := f.URL("gateway"), tt.want(dir); got != want {
			t.Errorf("%s: URL %s, want %s", tt.name, got, want)
		}
	}
}
