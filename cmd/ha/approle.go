package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/paygate/gateway/internal/pgha"
	"github.com/paygate/gateway/ledger/pgcluster"
)

// appRole is the least-privilege role the gateway serves as (sql/0026,
// docs/security.md "13. The database").
const appRole = pgcluster.AppRole

// serveURL prepares the formation's database for a gateway that serves with
// least privilege, and returns the URL it serves with: the migrations run
// first as the database's owner (postgres: pg_autoctl created the
// database), then gateway_app, which every migrated database has, gets
// LOGIN and its generated password (secretsDir/gateway_app.password, 0600),
// which the formation's servers check by scram-sha-256 over TLS (docs/ha.md,
// "Authentication and TLS of the formation").
func serveURL(ctx context.Context, f *pgha.Formation, gatewayBin, secretsDir string, stdout io.Writer) (string, error) {
	migrate := exec.CommandContext(ctx, gatewayBin, "migrate") //nolint:gosec // the operator's binary
	migrate.Env = append(os.Environ(), "DATABASE_URL="+f.URL("gateway"))
	migrate.Stdout, migrate.Stderr = stdout, os.Stderr
	if err := migrate.Run(); err != nil {
		return "", fmt.Errorf("ha: gateway migrate: %w", err)
	}
	pw, err := pgcluster.RolePassword(secretsDir, appRole)
	if err != nil {
		return "", err
	}
	db, err := sql.Open("pgx", f.URL("postgres"))
	if err != nil {
		return "", err
	}
	defer db.Close()
	// ALTER ROLE takes no bind parameters; the password is our own hex.
	if _, err := db.ExecContext(ctx, "alter role "+appRole+" login password '"+pw+"'"); err != nil {
		return "", fmt.Errorf("ha: giving %s its login: %w", appRole, err)
	}
	u, err := url.Parse(f.URL("gateway"))
	if err != nil {
		return "", err
	}
	u.User = url.UserPassword(appRole, pw)
	// The formation's password file holds its own roles', not this one's.
	q := u.Query()
	q.Del("passfile")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// secretsDir is where `ha run` keeps the formation's generated passwords.
func secretsDir(real string) string { return filepath.Join(real, "secrets") }
