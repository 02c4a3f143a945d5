package pgha

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/gateway/ledger/pgcluster"
)

// Authentication of the formation (docs/ha.md, "Authentication and TLS of
// the formation"; issue 31, point 4). pg_autoctl's `--auth scram-sha-256`
// alone changes nothing: it runs initdb with --auth=trust and appends its
// scram lines after initdb's trust lines, which match first (seen with
// pg_autoctl 2.0). So a formation made now (formation.json "scram") owns
// its pg_hba.conf: the servers are created with --skip-pg-hba, and before
// every start of a server this package writes
//
//   - the unix socket: postgres by peer authentication, only from the
//     server's OS user and root (pg_ident map formation_admin) — what
//     pg_autoctl and pgBackRest use on their own node; any other role by
//     scram-sha-256;
//   - TCP: hostssl only, scram-sha-256, loopback: a plain TCP connection
//     matches no line and is refused, and so is one without a password.
//
// The passwords (postgres, autoctl_node on the monitor,
// pgautofailover_replicator on the nodes) are generated once into
// auth/<role>.password (0600, the server user's) and listed in auth/pgpass
// (0600), which pg_autoctl and the servers it starts read through
// PGPASSFILE — its connections to the monitor, the standbys' replication,
// pg_basebackup and pg_rewind — and which the formation's URLs name with
// passfile=, so that no password is ever on a command line, in a URL or in
// a log. They are set (ALTER ROLE, over the socket) at each start of the
// monitor and of a node that is not in recovery; a standby has them by
// replication. The monitor's health checks (as pgautofailover_monitor, no
// password) still work: the monitor counts a server that asks for a
// password as alive.

// formationRoles are the roles that log in over TCP with a password.
var formationRoles = []string{"postgres", "autoctl_node", "pgautofailover_replicator"}

// identMapName is the pg_ident map of the socket's peer line.
const identMapName = "formation_admin"

func (f *Formation) authDir() string { return filepath.Join(f.dir, "auth") }

// PassFile is the formation's password file (libpq's .pgpass format), ""
// for a formation without passwords (made before scram-sha-256).
func (f *Formation) PassFile() string {
	if !f.scram {
		return ""
	}
	return filepath.Join(f.authDir(), "pgpass")
}

// ensureAuthFiles makes the passwords (once) and the password file.
func (f *Formation) ensureAuthFiles() error {
	if !f.scram {
		return nil
	}
	dir := f.authDir()
	var b strings.Builder
	b.WriteString("# Written by internal/pgha (formation_auth.go) at each start; docs/ha.md.\n")
	for _, role := range formationRoles {
		pw, err := pgcluster.RolePassword(dir, role)
		if err != nil {
			return err
		}
		if err := pgcluster.Chown(filepath.Join(dir, role+".password")); err != nil {
			return fmt.Errorf("pgha: %w", err)
		}
		// host:port:database:user:password; the passwords are hex.
		fmt.Fprintf(&b, "*:*:*:%s:%s\n", role, pw)
	}
	if err := os.WriteFile(f.PassFile(), []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("pgha: %w", err)
	}
	for _, p := range []string{f.PassFile(), dir} {
		if err := pgcluster.Chown(p); err != nil {
			return fmt.Errorf("pgha: %w", err)
		}
	}
	return nil
}

// formationHBA is every server's pg_hba.conf.
func formationHBA() string {
	return strings.Join([]string{
		"# Written by internal/pgha (formation_auth.go) before each start: edits are lost.",
		"# TYPE  DATABASE     USER      ADDRESS       METHOD",
		"local   all          postgres                peer map=" + identMapName,
		"local   all          all                     scram-sha-256",
		"hostssl all          all       127.0.0.1/32  scram-sha-256",
		"hostssl replication  all       127.0.0.1/32  scram-sha-256",
		"",
	}, "\n")
}

// formationIdent lets the server's OS user and root be postgres over the
// socket.
func formationIdent() (string, error) {
	name := "postgres"
	if os.Geteuid() != 0 {
		u, err := user.Current()
		if err != nil {
			return "", fmt.Errorf("pgha: %w", err)
		}
		name = u.Username
	}
	lines := []string{"# Written by internal/pgha (formation_auth.go) before each start.",
		identMapName + " " + name + " postgres"}
	if name != "root" {
		lines = append(lines, identMapName+" root postgres")
	}
	return strings.Join(lines, "\n") + "\n", nil
}

// writeAuth writes k's pg_hba.conf and pg_ident.conf (0600, the server
// user's), when its data directory exists.
func (f *Formation) writeAuth(k *Keeper) error {
	if !f.scram || !exists(filepath.Join(k.PGData, "PG_VERSION")) {
		return nil
	}
	ident, err := formationIdent()
	if err != nil {
		return err
	}
	for name, body := range map[string]string{"pg_hba.conf": formationHBA(), "pg_ident.conf": ident} {
		p := filepath.Join(k.PGData, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			return fmt.Errorf("pgha: %w", err)
		}
		if err := pgcluster.Chown(p); err != nil {
			return fmt.Errorf("pgha: %w", err)
		}
	}
	return nil
}

// authArgs are pg_autoctl create's authentication options.
func (f *Formation) authArgs() []string {
	if !f.scram {
		return []string{"--auth", "trust"}
	}
	// pg_autoctl takes one or the other; the method of --auth is only
	// what it would write in pg_hba.conf, which writeAuth writes instead.
	return []string{"--skip-pg-hba"}
}

// socketURL reaches k's server as postgres over its unix socket (peer).
func (f *Formation) socketURL(k *Keeper, db string) string {
	return fmt.Sprintf("postgres://postgres@/%s?host=%s&port=%d&sslmode=disable", db, url.QueryEscape(socketDir), k.Port)
}

// setPasswords sets roles' passwords on k's server over its socket, unless
// it is in recovery (a standby has them from its primary). It reports
// whether that is done; a server not answering yet is not an error.
func (f *Formation) setPasswords(ctx context.Context, k *Keeper, db string, roles ...string) (bool, error) {
	if !f.scram {
		return true, nil
	}
	conn, err := sql.Open("pgx", f.socketURL(k, db))
	if err != nil {
		return false, err
	}
	defer conn.Close()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var inRecovery bool
	if err := conn.QueryRowContext(cctx, "select pg_is_in_recovery()").Scan(&inRecovery); err != nil {
		return false, nil //nolint:nilerr // not up yet: the caller asks again
	}
	if inRecovery {
		return true, nil
	}
	for _, role := range roles {
		pw, err := pgcluster.RolePassword(f.authDir(), role)
		if err != nil {
			return false, err
		}
		// ALTER ROLE takes no bind parameters; the role is ours and the
		// password our own hex. The server stores its SCRAM verifier
		// (password_encryption is scram-sha-256 by default).
		if _, err := conn.ExecContext(cctx, "alter role "+strconv.Quote(role)+" password '"+pw+"'"); err != nil {
			return false, fmt.Errorf("pgha: the password of %s on %s: %w", role, k.Name, err)
		}
	}
	return true, nil
}

// waitPasswords waits until setPasswords has done its work on k.
func (f *Formation) waitPasswords(ctx context.Context, k *Keeper, db string, roles ...string) error {
	for {
		done, err := f.setPasswords(ctx, k, db, roles...)
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pgha: %s did not answer on its socket to set its passwords (log %s): %w", k.Name, k.log, ctx.Err())
		case <-k.exited:
			return fmt.Errorf("pgha: pg_autoctl for %s exited; the end of %s:\n%s", k.Name, k.log, tailFile(k.log, 20))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// passQuery is the password part of the formation's URLs.
func (f *Formation) passQuery() string {
	if !f.scram {
		return ""
	}
	return "&passfile=" + url.QueryEscape(f.PassFile())
}
