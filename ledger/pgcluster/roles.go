package pgcluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// The gateway's roles in a cluster pgcluster made (docs/security.md,
// "Database roles"): OwnerRole owns the gateway's database and runs the
// migrations; AppRole is what the gateway serves as (rows of its tables
// only, sql/0026); AuditorRole is sql/0006's read-only role. The bootstrap
// makes them here, as the superuser over the socket, so that the owner
// needs no CREATEROLE to run the migrations that grant to the others.
const (
	OwnerRole   = "gateway_owner"
	AppRole     = "gateway_app"
	AuditorRole = "gateway_auditor"
	// MoverRole is sql/0035's: the one role past the journal's guard,
	// for moving a merchant between cells (internal/cellmove), taken with
	// SET LOCAL ROLE by the operator's session. It logs in never.
	MoverRole = "gateway_mover"
)

// EnsureRoles makes OwnerRole and AppRole login roles with their generated
// passwords (Password), and AuditorRole and MoverRole without login, and sets each
// password again when it exists already (a secrets file restored from
// elsewhere wins over the cluster's copy).
func (c *Cluster) EnsureRoles(ctx context.Context) error {
	db, err := sql.Open("pgx", c.URL("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	for _, role := range []string{OwnerRole, AppRole, AuditorRole, MoverRole} {
		attrs := "nologin"
		if role != AuditorRole && role != MoverRole {
			pw, err := c.Password(role)
			if err != nil {
				return err
			}
			// CREATE/ALTER ROLE take no bind parameters; the password is
			// our own hex (Password) and the server stores its SCRAM
			// verifier (password_encryption).
			attrs = "login nosuperuser nocreatedb nocreaterole noreplication password " + quoteLiteral(pw)
		}
		var exists bool
		if err := db.QueryRowContext(ctx, "select exists (select 1 from pg_roles where rolname = $1)", role).Scan(&exists); err != nil {
			return fmt.Errorf("pgcluster: %w", err)
		}
		verb := "create"
		if exists {
			verb = "alter"
		}
		_, err := db.ExecContext(ctx, verb+" role "+quoteIdent(role)+" "+attrs)
		if verb == "create" && madeMeanwhile(err) {
			// Another process (a CLI command beside serve) made it
			// between the check and the CREATE: set it as ours.
			verb = "alter"
			_, err = db.ExecContext(ctx, verb+" role "+quoteIdent(role)+" "+attrs)
		}
		if err != nil {
			return fmt.Errorf("pgcluster: %s role %s: %w", verb, role, err)
		}
	}
	return nil
}

// CreateOwnedDatabase is CreateDatabase for the gateway: a new database
// belongs to OwnerRole (EnsureRoles first). One made before the roles
// existed keeps its owner, the superuser: MigrateURL then migrates as it.
func (c *Cluster) CreateOwnedDatabase(ctx context.Context, dbname string) error {
	return c.createDatabase(ctx, dbname, OwnerRole)
}

// MigrateURL is the URL to run dbname's migrations with: as OwnerRole when
// it owns the database, else (a database of a cluster made before issue 31)
// as the superuser that owns it.
func (c *Cluster) MigrateURL(ctx context.Context, dbname string) (string, error) {
	db, err := sql.Open("pgx", c.URL("postgres"))
	if err != nil {
		return "", err
	}
	defer db.Close()
	var owner string
	if err := db.QueryRowContext(ctx, "select pg_get_userbyid(datdba) from pg_database where datname = $1", dbname).Scan(&owner); err != nil {
		return "", fmt.Errorf("pgcluster: the owner of database %s: %w", dbname, err)
	}
	if owner != OwnerRole {
		return c.URL(dbname), nil
	}
	return c.RoleURL(OwnerRole, dbname)
}

// RoleURL is a URL for dbname as role (OwnerRole or AppRole) with its
// password, over the unix socket.
func (c *Cluster) RoleURL(role, dbname string) (string, error) {
	pw, err := c.Password(role)
	if err != nil {
		return "", err
	}
	q := url.Values{}
	q.Set("host", c.socketDir)
	q.Set("port", strconv.Itoa(c.port))
	q.Set("sslmode", "disable") // a unix socket: TLS does not apply
	return (&url.URL{Scheme: "postgres", User: url.UserPassword(role, pw), Path: "/" + dbname, RawQuery: q.Encode()}).String(), nil
}

// TLSURL is a URL for dbname as role over loopback TCP (ListenAddresses
// must include 127.0.0.1) with sslmode=verify-full and the cluster's CA.
func (c *Cluster) TLSURL(role, dbname string) (string, error) {
	pw, err := c.Password(role)
	if err != nil {
		return "", err
	}
	q := url.Values{}
	q.Set("sslmode", "verify-full")
	q.Set("sslrootcert", c.CAFile())
	return (&url.URL{Scheme: "postgres", User: url.UserPassword(role, pw), Host: "127.0.0.1:" + strconv.Itoa(c.port),
		Path: "/" + dbname, RawQuery: q.Encode()}).String(), nil
}

// madeMeanwhile reports a CREATE ROLE that lost a race to another:
// duplicate_object, or unique_violation on pg_authid's index.
func madeMeanwhile(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "42710" || pe.Code == "23505")
}

func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
