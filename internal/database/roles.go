package database

import (
	"context"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
)

// The database roles of docs/security.md ("Database roles"): migrations run
// as the owner of the tables; the gateway serves as AppRole, which has the
// rows of the gateway's tables and nothing else (sql/0026).
const AppRole = "gateway_app"

// ErrSuperuser is CheckServingRole's refusal.
var ErrSuperuser = errors.New("the database user is a PostgreSQL superuser: serve connects as the least-privilege role " +
	AppRole + " (docs/security.md, \"Database roles\"); set DATABASE_ALLOW_SUPERUSER=1 only on a development machine")

// CheckServingRole refuses a connection whose user is a superuser: a
// gateway that serves as one could drop the journal, switch its triggers
// off or read every other database of the cluster, so a bug or a stolen
// connection would be worth everything. allowSuperuser is the explicit
// development setting (DATABASE_ALLOW_SUPERUSER=1; `gateway devdb` sets it
// for the tests' throwaway clusters).
func CheckServingRole(ctx context.Context, db bun.IDB, allowSuperuser bool) error {
	var super bool
	if err := db.NewRaw("select rolsuper from pg_roles where rolname = current_user").Scan(ctx, &super); err != nil {
		return fmt.Errorf("ledger: checking the database user: %w", err)
	}
	if super && !allowSuperuser {
		return ErrSuperuser
	}
	return nil
}

// grantApp re-applies sql/0026's grant after a migration run, so a table
// that a later migration added is readable and writable by AppRole too. A
// database migrated before sql/0026 existed has no function yet (it comes
// with 0026 itself, which calls it).
func grantApp(ctx context.Context, db bun.IDB) error {
	var exists bool
	if err := db.NewRaw("select to_regproc('public.gateway_app_grant') is not null").Scan(ctx, &exists); err != nil {
		return fmt.Errorf("ledger: migrate: %w", err)
	}
	if !exists {
		return nil
	}
	if _, err := db.NewRaw("select gateway_app_grant()").Exec(ctx); err != nil {
		return fmt.Errorf("ledger: migrate: granting %s its tables: %w", AppRole, err)
	}
	return nil
}

// migrateHint explains a failed migration run by the serving role: it may
// not change the schema, by design.
func migrateHint(ctx context.Context, db bun.IDB) string {
	var user string
	if err := db.NewRaw("select current_user").Scan(ctx, &user); err != nil || user != AppRole {
		return ""
	}
	return fmt.Sprintf(" (%s may not change the schema: run `gateway migrate` with DATABASE_URL naming the tables' owner first, docs/security.md)", AppRole)
}
