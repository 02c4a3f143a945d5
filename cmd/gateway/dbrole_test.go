package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/database"
)

// serve never runs as a PostgreSQL superuser unless the development
// setting says so (docs/security.md, "Database roles"): exit 2, and a
// message that names the way out.
func TestServeRefusesSuperuser(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	delete(g.env, "DATABASE_ALLOW_SUPERUSER")
	r := g.run("serve")
	if r.code() != 2 || r.err == nil || !strings.Contains(r.err.Error(), "superuser") ||
		!strings.Contains(r.err.Error(), "DATABASE_ALLOW_SUPERUSER") {
		t.Fatalf("serve as the superuser: exit %d, %v; want exit 2 naming the superuser and DATABASE_ALLOW_SUPERUSER", r.code(), r.err)
	}
}

// checkServesAsAppRole checks, through the superuser URL of `db url`, that
// every connection of the running gateway is gateway_app's: the embedded
// cluster of `make run` serves with least privilege too.
func checkServesAsAppRole(t *testing.T, adminURL string) {
	t.Helper()
	ctx := context.Background()
	db, err := database.OpenDB(ctx, adminURL, database.DBOptions{ConnsMax: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var users []string
	// The admin connection has application_name gateway too: only the
	// others are the server's.
	if err := db.NewRaw(`select distinct usename::text from pg_stat_activity
		where application_name = 'gateway' and datname = 'gateway' and pid <> pg_backend_pid()`).Scan(ctx, &users); err != nil {
		t.Fatal(err)
	}
	if len(users) != 1 || users[0] != database.AppRole {
		t.Errorf("the gateway's connections are %v, want only %s", users, database.AppRole)
	}
	if err := database.CheckServingRole(ctx, db, false); !errors.Is(err, database.ErrSuperuser) {
		t.Errorf("CheckServingRole(db url's user) = %v, want ErrSuperuser", err)
	}
}

// checkEmbeddedAuditRole: `audit role` makes an auditor's login on the
// embedded cluster although the gateway's own role may not make roles
// (it uses the cluster's superuser), and the auditor signs in over the
// socket with its password (scram-sha-256).
func checkEmbeddedAuditRole(t *testing.T, g *gateway) {
	t.Helper()
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte("an embedded auditor's password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var res struct{ URL string }
	out := g.mustRun("audit", "role", "--login", "embedded_auditor", "--password-file", pwFile)
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("audit role printed %s (%v)", out, err)
	}
	u, err := url.Parse(res.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("embedded_auditor", "an embedded auditor's password")
	db, err := database.OpenDB(context.Background(), u.String(), database.DBOptions{ConnsMax: 1})
	if err != nil {
		t.Fatalf("the auditor's login: %v", err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(context.Background(), "select count(*) from bill").Scan(&n); err != nil {
		t.Errorf("the auditor cannot read the bill: %v", err)
	}
}
