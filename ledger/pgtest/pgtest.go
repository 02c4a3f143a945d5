// Package pgtest gives each test a fresh PostgreSQL database, cloned from a
// template that has every migration applied, so that tests run in parallel
// without seeing each other's rows.
//
// The server is the one DATABASE_URL names (its user must be allowed to
// create databases) or, without it, a private cluster this test process
// starts in a temporary directory and stops in Main.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver "pgx"
	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/ledger/pgcluster"
	schema "github.com/paygate/gateway/sql"
)

var (
	serverOnce sync.Once
	serverURL  string // admin URL of the server
	serverErr  error
	cluster    *pgcluster.Cluster
	tmpDir     string

	templateOnce sync.Once
	templateName string
	templateErr  error
)

// Main runs the tests of a package and stops the private cluster afterwards.
// Call it from TestMain: func TestMain(m *testing.M) { pgtest.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	if cluster != nil {
		_ = cluster.Stop()
	}
	if tmpDir != "" {
		_ = os.RemoveAll(tmpDir)
	}
	os.Exit(code)
}

func server() (string, error) {
	serverOnce.Do(func() {
		if u := os.Getenv("DATABASE_URL"); u != "" {
			serverURL = u
			return
		}
		tmpDir, serverErr = os.MkdirTemp("", "gateway-test-pg-")
		if serverErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cluster, serverErr = pgcluster.Start(ctx, pgcluster.Options{Dir: tmpDir})
		if serverErr == nil {
			serverURL = cluster.URL("postgres")
		}
	})
	return serverURL, serverErr
}

// withDatabase returns u with its database name replaced.
func withDatabase(u, name string) (string, error) {
	parsed, err := url.Parse(u)
	if err != nil || (parsed.Scheme != "postgres" && parsed.Scheme != "postgresql") {
		return "", fmt.Errorf("pgtest: DATABASE_URL must be a postgres:// URL")
	}
	parsed.Path = "/" + name
	return parsed.String(), nil
}

// template returns the name of the migrated template database, building it
// once per server (across processes: an advisory lock serialises the build,
// and the name carries the migrations' fingerprint).
func template(ctx context.Context, admin *sql.DB, adminURL string) (string, error) {
	templateOnce.Do(func() {
		templateName = "gw_tmpl_" + schema.Fingerprint()
		templateErr = buildTemplate(ctx, admin, adminURL, templateName)
	})
	return templateName, templateErr
}

func buildTemplate(ctx context.Context, admin *sql.DB, adminURL, name string) error {
	conn, err := admin.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "select pg_advisory_lock(hashtext('gateway-test-template'))"); err != nil {
		return err
	}
	defer conn.ExecContext(context.Background(), "select pg_advisory_unlock(hashtext('gateway-test-template'))") //nolint:errcheck
	var exists bool
	if err := conn.QueryRowContext(ctx, "select exists (select 1 from pg_database where datname = $1)", name).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	building := name + "_building"
	if _, err := conn.ExecContext(ctx, "drop database if exists "+building); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "create database "+building); err != nil {
		return err
	}
	u, err := withDatabase(adminURL, building)
	if err != nil {
		return err
	}
	db, err := database.OpenDB(ctx, withConnectTimeout(u), database.DBOptions{ConnsMax: 2})
	if err != nil {
		return err
	}
	err = database.Migrate(ctx, db)
	db.Close()
	if err != nil {
		return err
	}
	// Renaming publishes the template only once it is complete.
	_, err = conn.ExecContext(ctx, "alter database "+building+" rename to "+name)
	return err
}

// NewDatabase creates a fresh migrated database for t, dropped when t ends,
// and returns its URL.
//
// Under -short (make test-short, the fast tier) it skips t instead: that
// tier runs on a machine with nothing but Go and must not start a server,
// and every test that needs PostgreSQL comes here (NewDB, the api test
// server, gatewaytest, the cmd/gateway installations), so this one skip
// keeps them all out of it. make test runs them.
func NewDatabase(t testing.TB) string {
	t.Helper()
	SkipShort(t)
	u, err := server()
	if err != nil {
		t.Fatalf("pgtest: no PostgreSQL: %v", err)
	}
	ctx := context.Background()
	admin, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer admin.Close()
	tmpl, err := template(ctx, admin, u)
	if err != nil {
		t.Fatalf("pgtest: building the template database: %v", err)
	}
	name := "gw_t_" + randomHex(8)
	// A template cannot be cloned while someone is connected to it; the
	// template is never opened after it is built, but retry a few times in
	// case a concurrent build in another process still holds it.
	for attempt := 0; ; attempt++ {
		_, err = admin.ExecContext(ctx, "create database "+name+" template "+tmpl)
		if err == nil || attempt == 20 || !strings.Contains(err.Error(), "being accessed by other users") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("pgtest: creating database: %v", err)
	}
	// A database's privileges are not copied from its template: what
	// sql/0021 revoked there (auditors' temporary tables) is revoked here
	// again, as on a database the migrations ran in.
	if _, err := admin.ExecContext(ctx, "revoke temporary on database "+name+" from public"); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", u)
		if err != nil {
			return
		}
		defer admin.Close()
		_, _ = admin.ExecContext(context.Background(), "drop database if exists "+name+" with (force)")
	})
	dbURL, err := withDatabase(u, name)
	if err != nil {
		t.Fatal(err)
	}
	return withConnectTimeout(dbURL)
}

// testConnectTimeoutSecs replaces the gateway's 2 s connect_timeout (made
// to fail fast in an outage) for test databases: CI runs every package at
// once on 2 cores, where starting a backend can take longer, and no test
// of a fresh database is about connecting. A URL that names its own
// connect_timeout keeps it.
const testConnectTimeoutSecs = "60"

func withConnectTimeout(u string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return u
	}
	q := parsed.Query()
	if q.Get("connect_timeout") == "" {
		q.Set("connect_timeout", testConnectTimeoutSecs)
		parsed.RawQuery = q.Encode()
	}
	return parsed.String()
}

// NewDB is NewDatabase opened with bun, closed when t ends.
func NewDB(t testing.TB) *bun.DB {
	t.Helper()
	db, err := database.OpenDB(context.Background(), NewDatabase(t), database.DBOptions{ConnsMax: 16})
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// SkipShort skips t under -short: t needs PostgreSQL, which the fast tier
// (make test-short) neither has nor starts (docs/architecture.md, "Test
// tiers"). For a test that reaches the database other than through
// NewDatabase.
func SkipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs PostgreSQL: skipped under -short (make test-short); make test runs it")
	}
}
