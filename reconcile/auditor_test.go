package reconcile_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver "pgx"

	"github.com/paygate/gateway/postings"
	"github.com/paygate/gateway/reconcile"
)

// auditorChecks are what an auditor may and may not do. Every write, and
// every read of what is not granted, is 42501 (insufficient_privilege).
var (
	auditorReads = []string{
		`select count(*) from entries`,
		`select count(*) from postings`,
		`select count(*) from accounts`,
		`select count(*) from balances`,
		`select count(*) from bill_lines`,
		`select count(*) from ledger_heads`,
		`select count(*) from audit_checkpoints`,
		`select count(*) from bill where shop_no = (select shop_no from merchants order by id limit 1)`,
		`select count(*) from trial_balance`,
		`select count(*) from merchants where shop_no like 'SH%'`,
		`select count(*) from entries where hash <> sha256(prev_hash || entry_canonical(merchant_id, merchant_seq))`,
	}
	auditorRefusals = []string{
		`insert into entries (merchant_id, merchant_seq, kind, created_at, prev_hash, hash) values (1, 99, 'DEPOSIT', now(), '\x00', '\x00')`,
		`update entries set kind = 'FEE'`,
		`delete from entries`,
		`truncate entries`,
		`update postings set amount = 1`,
		`update balances set balance = 0`,
		`delete from bill_lines`,
		`update cards set status = 'FROZEN'`,
		`update merchants set status = 'DISABLED'`,
		`insert into merchants (shop_no, name, currencies, public_key_sha256, private_key_sealed) values ('x', 'x', '{USD}', '\x00', '\x00')`,
		`delete from authorizations`,
		`update ledger_heads set last_seq = 0`,
		`select * from cards`,
		`select public_key_sha256 from merchants`,
		`select * from idempotency_keys`,
		`select * from authorizations`,
		`create table auditor_notes (note text)`,
		`create view auditor_view as select 1`,
		`create temp table auditor_scratch (note text)`,
		`insert into audit_checkpoints (created_at, key_id, tree_size, root, heads, signed, signature) values (now(), 'k', 0, '\x00', '[]', '\x00', '\x00')`,
		`update accounts set address = 'm:1:funding:XXX'`,
		`alter table entries disable trigger entries_append_only`,
	}
)

// checkAuditor runs the reads and the refusals on a connection that acts as
// an auditor.
func checkAuditor(t *testing.T, conn *sql.Conn) {
	t.Helper()
	ctx := context.Background()
	for _, q := range auditorReads {
		var n int64
		if err := conn.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Errorf("an auditor cannot %q: %v", q, err)
		}
	}
	var zero bool
	if err := conn.QueryRowContext(ctx, `select bool_and(currency_total = 0) and count(*) > 0 from trial_balance`).Scan(&zero); err != nil || !zero {
		t.Errorf("the trial balance does not sum to zero per currency: %v, %v", zero, err)
	}
	for _, q := range auditorRefusals {
		_, err := conn.ExecContext(ctx, q)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "42501" {
			t.Errorf("an auditor's %q: %v, want 42501 (insufficient_privilege)", q, err)
		}
	}
}

// withUser returns the URL u connecting as user with password.
func withUser(t *testing.T, u, user, password string) string {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	parsed.User = url.UserPassword(user, password)
	return parsed.String()
}

func openSQL(t *testing.T, u string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// fundedFixture is a fixture with something in every table an auditor
// reads.
func fundedFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	m := f.fundedMerchant(t, "USD", 100_00)
	c := f.card(t, m.ID, "USD", 40_00)
	f.clear(t, f.authorize(t, c.CardNo, 10_00, "USD").AuthID, 10_00)
	return f
}

func TestAuditorRoleReadsAndCannotWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := fundedFixture(t)
	// SET ROLE on a connection of its own: the superuser becomes the
	// auditor for the rest of the session.
	conn, err := openSQL(t, f.url).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "set role "+reconcile.AuditorRole); err != nil {
		t.Fatal(err)
	}
	checkAuditor(t, conn)
}

func TestCreateAuditor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := fundedFixture(t)
	admin := openSQL(t, f.url)
	// Roles belong to the whole cluster, which other tests share.
	login := "gw_test_auditor_" + randomSuffix(t)
	t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), "drop role if exists "+login) })
	password := "correct horse battery staple"

	created, err := reconcile.CreateAuditor(ctx, admin, login, "an older password")
	if err != nil || !created {
		t.Fatalf("CreateAuditor = %v, %v", created, err)
	}
	// Again: a rotation of the password.
	if created, err = reconcile.CreateAuditor(ctx, admin, login, password); err != nil || created {
		t.Fatalf("CreateAuditor of an existing auditor = %v, %v, want a password change", created, err)
	}
	var canLogin, member bool
	var verifier string
	err = admin.QueryRowContext(ctx, `
		select r.rolcanlogin, pg_has_role(r.oid, $2, 'member'), coalesce(a.rolpassword, '')
		from pg_roles r join pg_authid a on a.oid = r.oid where r.rolname = $1`, login, reconcile.AuditorRole).
		Scan(&canLogin, &member, &verifier)
	if err != nil || !canLogin || !member || !strings.HasPrefix(verifier, "SCRAM-SHA-256$4096:") {
		t.Fatalf("role %s: login %v, member %v, password %q, %v", login, canLogin, member, verifier, err)
	}

	// Logged in as the auditor: reads, no writes, read-only by default.
	auditor := openSQL(t, withUser(t, f.url, login, password))
	conn, err := auditor.Conn(ctx)
	if err != nil {
		t.Fatalf("logging in as %s: %v", login, err)
	}
	defer conn.Close()
	var readOnly string
	if err := conn.QueryRowContext(ctx, "show default_transaction_read_only").Scan(&readOnly); err != nil || readOnly != "on" {
		t.Errorf("default_transaction_read_only = %q, %v; want on", readOnly, err)
	}
	// The privileges are checked, not only the read-only default.
	if _, err := conn.ExecContext(ctx, "set default_transaction_read_only = off"); err != nil {
		t.Fatal(err)
	}
	checkAuditor(t, conn)
	// A real login cannot become anyone else (a superuser who SET ROLE to
	// the auditor still could: the session's user is what SET ROLE checks).
	var pe *pgconn.PgError
	if _, err := conn.ExecContext(ctx, "set role "+currentUser(t, admin)); !errors.As(err, &pe) || pe.Code != "42501" {
		t.Errorf("an auditor took the gateway's role: %v", err)
	}

	for _, tt := range []struct {
		name, login, password string
		want                  postings.Code
	}{
		{"upper case", "Auditor", password, postings.EINVALID},
		{"reserved prefix", "pg_auditor", password, postings.EINVALID},
		{"the group itself", reconcile.AuditorRole, password, postings.EINVALID},
		{"quote", `a"b`, password, postings.EINVALID},
		{"short password", login, "short", postings.EINVALID},
		{"not ASCII", login, "pässwörd-pässwörd", postings.EINVALID},
		{"a newline", login, "two\nlines-of-password", postings.EINVALID},
		{"an existing role that is no auditor", currentUser(t, admin), password, postings.ECONFLICT},
	} {
		if _, err := reconcile.CreateAuditor(ctx, admin, tt.login, tt.password); postings.ErrorCode(err) != tt.want {
			t.Errorf("%s: CreateAuditor = %v, want %s", tt.name, err, tt.want)
		}
	}
}

func currentUser(t *testing.T, db *sql.DB) string {
	t.Helper()
	var u string
	if err := db.QueryRow("select current_user").Scan(&u); err != nil {
		t.Fatal(err)
	}
	return u
}

func randomSuffix(t *testing.T) string {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
