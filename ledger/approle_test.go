package ledger_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgtest"
)

// The gateway serves as gateway_app (sql/0026, docs/security.md "Database
// roles"): the ledger works through it, but it changes no schema, truncates
// nothing, cannot switch the journal's triggers off, and the journal stays
// append-only for it.
func TestAppRoleLeastPrivilege(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	adminURL := pgtest.NewDatabase(t)
	appURL := appRoleURL(t, adminURL)
	app, err := database.OpenDB(ctx, appURL, database.DBOptions{ConnsMax: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })

	// Its DML is enough for the ledger: a merchant, a deposit, a verify.
	l := newLedgerOn(t, app, ledger.Config{})
	m := newMerchant(t, l, "USD")
	deposit(t, l, m.ID, "USD", 10_00)
	mustVerify(t, l)
	if err := database.Migrate(ctx, app); err != nil {
		t.Errorf("Migrate on an up-to-date database as the app role: %v", err)
	}
	if err := database.CheckServingRole(ctx, app, false); err != nil {
		t.Errorf("CheckServingRole(app role) = %v", err)
	}

	// Every table of the schema, present and future (the grant is re-made
	// after each migration run): rows may be read and written.
	var tables []string
	if err := app.NewRaw("select tablename from pg_tables where schemaname = 'public' and tablename <> 'schema_migrations' order by 1").
		Scan(ctx, &tables); err != nil {
		t.Fatal(err)
	}
	if len(tables) < 10 {
		t.Fatalf("only %d tables visible: %v", len(tables), tables)
	}
	for _, table := range tables {
		// "where false" touches no row; the privileges are checked all
		// the same, when the statement starts.
		for _, stmt := range []string{
			"select count(*) from " + table,
			"insert into " + table + " overriding system value select * from " + table + " where false",
			"delete from " + table + " where false",
		} {
			if _, err := app.ExecContext(ctx, stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
		var canUpdate, canTruncate bool
		if err := app.NewRaw("select has_table_privilege(?, 'UPDATE'), has_table_privilege(?, 'TRUNCATE')", table, table).
			Scan(ctx, &canUpdate, &canTruncate); err != nil {
			t.Fatal(err)
		}
		if !canUpdate || canTruncate {
			t.Errorf("%s: UPDATE %v, TRUNCATE %v; want UPDATE only", table, canUpdate, canTruncate)
		}
	}

	refused := []struct {
		stmt string
		code string // SQLSTATE
	}{
		{"create table app_made (id int)", "42501"},
		{"alter table merchants add column app_made int", "42501"},
		{"drop table merchants", "42501"},
		{"truncate merchants", "42501"},
		{"truncate entries", "42501"},
		{"alter table entries disable trigger entries_append_only", "42501"},
		{"create index app_made_idx on merchants (name)", "42501"},
		{"set session_replication_role = replica", "42501"},
		{"create temporary table app_temp (id int)", "42501"},
		{"create role app_made", "42501"},
		{"insert into schema_migrations (version_id, is_applied) values (99999, true)", "42501"},
		// The journal's triggers hold for the app role as for anyone.
		{"update entries set created_at = created_at", "23001"},
		{"delete from postings", "23001"},
		{"update bill_lines set amount = amount", "23001"},
	}
	for _, tt := range refused {
		_, err := app.ExecContext(ctx, tt.stmt)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != tt.code {
			t.Errorf("%s as gateway_app: err = %v, want SQLSTATE %s", tt.stmt, err, tt.code)
		}
	}

	// The superuser of the test server is refused for serving unless the
	// development setting says so.
	admin, err := database.OpenDB(ctx, adminURL, database.DBOptions{ConnsMax: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := database.CheckServingRole(ctx, admin, false); !errors.Is(err, database.ErrSuperuser) {
		t.Errorf("CheckServingRole(superuser) = %v, want ErrSuperuser", err)
	}
	if err := database.CheckServingRole(ctx, admin, true); err != nil {
		t.Errorf("CheckServingRole(superuser, allowed) = %v", err)
	}
}

// appRoleURL makes a login role of this test that is a member of
// gateway_app (as an operator's would be) and returns adminURL as it. A
// role per test: the cluster is shared by every package's tests at once.
func appRoleURL(t *testing.T, adminURL string) string {
	t.Helper()
	ctx := context.Background()
	admin, err := database.OpenDB(ctx, adminURL, database.DBOptions{ConnsMax: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	raw := make([]byte, 12)
	if _, err := rand.Read(raw); err != nil {
		t.Fatal(err)
	}
	role, pw := "gw_app_t_"+hex.EncodeToString(raw[:6]), hex.EncodeToString(raw[6:])
	// CREATE ROLE takes no bind parameters; both are our own hex.
	if _, err := admin.ExecContext(ctx, "create role "+role+" login password '"+pw+"' in role gateway_app"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin, err := database.OpenDB(context.Background(), adminURL, database.DBOptions{ConnsMax: 1})
		if err != nil {
			return
		}
		defer admin.Close()
		// Cleanups run in reverse: the ledger and the app role's pool
		// are closed by now.
		_, _ = admin.ExecContext(context.Background(), "drop role if exists "+role)
	})
	u, err := url.Parse(adminURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(role, pw)
	if !strings.HasPrefix(u.Scheme, "postgres") {
		t.Fatalf("not a postgres URL: %s", adminURL)
	}
	return u.String()
}
