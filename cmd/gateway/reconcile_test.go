package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/network"
)

// openTestLedger opens a ledger on the installation's database, for what
// no command does (the card network's side) and for tampering.
func (g *gateway) openTestLedger() *gatewaytest.Gateway {
	g.t.Helper()
	db, err := database.OpenDB(context.Background(), g.env["DATABASE_URL"], database.DBOptions{ConnsMax: 4})
	if err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(func() { db.Close() })
	return gatewaytest.New(g.t, db, gatewaytest.Options{})
}

func TestAuditStatementCommand(t *testing.T) {
	t.Parallel()
	g, c := newShopGateway(t, "Statement shop", "USD,EUR", "USD 100.00", "USD 0.50", "EUR 7")
	// Yesterday to tomorrow: the deposits are inside even across midnight.
	from, to := aroundToday()

	out := g.mustRun("audit", "statement", "--shop-no", c.ShopNo, "--from", from, "--to", to)
	for _, want := range []string{"Statement of " + c.ShopNo, "total, 1 account  EUR", " 7.00 ", " 100.50 ", "OK: 2 accounts in 2 currencies"} {
		if !strings.Contains(out, want) {
			t.Errorf("audit statement printed no %q:\n%s", want, out)
		}
	}
	var rep struct {
		ShopNo   string
		Accounts []struct {
			Account, Currency string
			Movements         json.Number
			Lines             int
		}
		Mismatches int
	}
	js := g.mustRun("audit", "statement", "--shop-no", c.ShopNo, "--from", from, "--to", to, "--json")
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, js)
	}
	if rep.ShopNo != c.ShopNo || len(rep.Accounts) != 2 || rep.Accounts[1].Movements != "100.50" || rep.Accounts[1].Lines != 2 {
		t.Errorf("audit statement --json: %s", js)
	}
	// The day before yesterday: nothing yet, nothing wrong.
	before := time.Now().UTC().AddDate(0, 0, -2).Format(time.DateOnly)
	if out := g.mustRun("audit", "statement", "--shop-no", c.ShopNo, "--from", before, "--to", before); !strings.Contains(out, "OK: 2 accounts") {
		t.Errorf("an empty period: %s", out)
	}

	g.mustFail("--from: must be a date YYYY-MM-DD", "audit", "statement", "--shop-no", c.ShopNo, "--from", "2030-02-30", "--to", to)
	// Days that parse but PostgreSQL cannot hold (no year 0) or that are
	// outside the accepted range are refused before SQL, naming the flag;
	// the widest range is a valid statement.
	g.mustFail("--from: must be a day from 1970-01-01 to 9999-12-31", "audit", "statement", "--shop-no", c.ShopNo, "--from", "0000-01-01", "--to", to)
	g.mustFail("--from: must be a day from 1970-01-01 to 9999-12-31", "audit", "statement", "--shop-no", c.ShopNo, "--from", "0001-01-01", "--to", to)
	g.mustFail("--to: must be a date YYYY-MM-DD", "audit", "statement", "--shop-no", c.ShopNo, "--from", from, "--to", "10000-01-01")
	g.mustFail("--to: must be a date YYYY-MM-DD", "audit", "statement", "--shop-no", c.ShopNo, "--from", from, "--to", "2031-02-29")
	if out := g.mustRun("audit", "statement", "--shop-no", c.ShopNo, "--from", "1970-01-01", "--to", "9999-12-31"); !strings.Contains(out, "OK: 2 accounts") {
		t.Errorf("the widest period: %s", out)
	}
	g.mustFail("--to is required", "audit", "statement", "--shop-no", c.ShopNo, "--from", from)
	g.mustFail("--to must not be before --from", "audit", "statement", "--shop-no", c.ShopNo, "--from", to, "--to", from)
	g.mustFail("--shop-no is required", "audit", "statement", "--from", from, "--to", to)
	g.mustFail("not found", "audit", "statement", "--shop-no", "SH0000000000", "--from", from, "--to", to)

	// A bill line changed behind the triggers' back: exit status 1, the
	// account named.
	l := g.openTestLedger()
	tamper(t, l, `update bill_lines set amount = amount + 1 where bill_seq = 2`)
	r := g.run("audit", "statement", "--shop-no", c.ShopNo, "--from", from, "--to", to)
	if r.code() != 1 || !strings.Contains(r.stdout, "MISMATCH USD funding: opening") {
		t.Errorf("a tampered statement: exit %d, %v:\n%s", r.code(), r.err, r.stdout)
	}
}

// tamper changes one journal row with the append-only triggers off.
func tamper(t *testing.T, l *gatewaytest.Gateway, query string) {
	t.Helper()
	ctx := context.Background()
	db := l.DB()
	for _, table := range []string{"entries", "postings", "bill_lines"} {
		if _, err := db.ExecContext(ctx, "alter table "+table+" disable trigger "+table+"_append_only"); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := db.ExecContext(ctx, query); err != nil {
		t.Fatal(err)
	} else if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("tamper changed %d rows", n)
	}
	for _, table := range []string{"entries", "postings", "bill_lines"} {
		if _, err := db.ExecContext(ctx, "alter table "+table+" enable trigger "+table+"_append_only"); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReconcileSettlementCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGateway(t)
	shop := g.createMerchant("Card shop", "USD")
	g.deposit(shop.ShopNo, "USD", "500.00")
	l := g.openTestLedger()
	m, err := l.MerchantByShopNo(ctx, shop.ShopNo)
	if err != nil {
		t.Fatal(err)
	}
	card, err := l.Cards.CreateCard(ctx, m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 100_00}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for i, minor := range []int64{12_34, 5_00} {
		a, err := l.Network.Authorize(ctx, network.AuthRequest{MessageID: fmt.Sprintf("auth-msg-%d", i), CardNo: card.CardNo, Amount: minor, Currency: "USD"})
		if err != nil || !a.Approved {
			t.Fatalf("Authorize: %+v, %v", a, err)
		}
		res, err := l.Network.Clear(ctx, network.ClearRequest{MessageID: fmt.Sprintf("clr-msg-%d", i), AuthID: a.AuthID, Amount: minor})
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, fmt.Sprintf("clr-msg-%d,%s,%d.%02d,USD,%s", i, a.AuthID, minor/100, minor%100, res.CreatedAt.UTC().Format(time.DateOnly)))
	}
	dir := t.TempDir()
	write := func(name string, lines ...string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	header := "message_id,auth_id,amount,currency,date"
	day := rows[0][strings.LastIndex(rows[0], ",")+1:]

	// Before any file is recorded: one row short and one amount wrong.
	bad := write("bad.csv", header, strings.Replace(rows[0], ",12.34,", ",12.35,", 1))
	if r := g.run("reconcile", "settlement", bad, "--day", day); r.code() != 1 ||
		!strings.Contains(r.stdout, "amount differs: the file has 12.35 USD, the ledger 12.34 USD") || !strings.Contains(r.stdout, "clr-msg-1") {
		t.Errorf("a file that does not match: exit %d %v\n%s", r.code(), r.err, r.stdout)
	}

	// An old file without a period line, its day given: matched, recorded.
	good := write("good.csv", header, rows[0], rows[1])
	out := g.mustRun("reconcile", "settlement", good, "--day", day, "--by", "cli:finance")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.Contains(out, "matched 2, amount_differs 0") || !strings.HasPrefix(lines[2], "CURRENCY  FILE ROWS  FILE AMOUNT  LEDGER CLEARINGS") ||
		!strings.Contains(lines[3], "17.34") || !strings.Contains(out, "Recorded: run 1, 2 clearings, by cli:finance") ||
		!strings.HasPrefix(lines[len(lines)-1], "MATCHED: every row matched") {
		t.Errorf("a matching file:\n%s", out)
	}
	// Again, flags after the file, and JSON: the same file is the same run.
	js := g.mustRun("reconcile", "settlement", "--json", good, "--day", day)
	var rep struct {
		Counts map[string]int
		Totals []struct {
			Currency                 string
			FileAmount, LedgerAmount json.Number
		}
		AlreadyRecorded bool
		Verdict         struct{ ExitStatus int }
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil || rep.Counts["matched"] != 2 || len(rep.Totals) != 1 ||
		rep.Totals[0].FileAmount != "17.34" || rep.Totals[0].LedgerAmount != "17.34" || !rep.AlreadyRecorded || rep.Verdict.ExitStatus != 0 {
		t.Errorf("reconcile settlement --json, again: %v\n%s", err, js)
	}

	// Discrepancies: exit status 1, each with its reason.
	for _, tt := range []struct {
		name  string
		lines []string
		want  []string
	}{
		{"one row short and one amount wrong, after good.csv", []string{header, strings.Replace(rows[0], ",12.34,", ",12.35,", 1)},
			[]string{"already reconciled by good.csv", "clr-msg-1", shop.ShopNo}},
		{"only the header", []string{"# period: " + day, header}, []string{"empty_file", "the file has no rows, but the ledger has 2 clearings"}},
		{"billed again in another file", []string{"# period: " + day, header, strings.Replace(rows[1], "clr-msg-1,", "clr-msg-1b,", 1)},
			[]string{"already_reconciled", "already reconciled by good.csv (sha256 "}},
	} {
		r := g.run("reconcile", "settlement", write(strings.ReplaceAll(tt.name, " ", "-")+".csv", tt.lines...), "--day", day)
		last := strings.TrimSpace(r.stdout)[strings.LastIndex(strings.TrimSpace(r.stdout), "\n")+1:]
		if r.code() != 1 || !strings.HasPrefix(last, "DISCREPANCIES: ") || !strings.HasSuffix(last, "(exit status 1)") {
			t.Errorf("%s: exit %d %v\n%s", tt.name, r.code(), r.err, r.stdout)
		}
		for _, want := range tt.want {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s: the report lacks %q:\n%s", tt.name, want, r.stdout)
			}
		}
	}

	// Input that cannot be reconciled at all: exit status 2, UNUSABLE.
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{write("header.csv", "auth_id,amount", rows[0]), "--day", day}, "line 1: the header must be"},
		{[]string{good}, "the file states no settlement period"},
		{[]string{write("latin1.csv", header, rows[0], "clr-x,auth_caf\xe9,1.00,USD,"+day), "--day", day}, "line 3: byte 15 (0xE9) is not UTF-8"},
		{[]string{write("other-day.csv", "# period: 2030-01-01", header), "--day", day}, "the file's period is 2030-01-01"},
		{[]string{filepath.Join(dir, "absent.csv"), "--day", day}, "no such file"},
		{[]string{good, "--day", "2030-02-30"}, "--day: must be a date YYYY-MM-DD"},
		{[]string{good, "--from", day}, "--from and --to go together"},
		{nil, "want one FILE.csv, got 0"},
		{[]string{good, good}, "want one FILE.csv, got 2"},
	} {
		r := g.run(append([]string{"reconcile", "settlement"}, tt.args...)...)
		if r.code() != 2 || r.err == nil || !strings.Contains(r.err.Error(), tt.want) || strings.Contains(r.stdout+r.err.Error(), "\xe9") {
			t.Errorf("reconcile settlement %v: exit %d, %v; want 2 saying %q", tt.args, r.code(), r.err, tt.want)
		}
	}
}

func TestAuditRoleCommand(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	suffix := make([]byte, 6)
	if _, err := rand.Read(suffix); err != nil {
		t.Fatal(err)
	}
	login := "gw_test_cli_auditor_" + hex.EncodeToString(suffix)
	l := g.openTestLedger()
	t.Cleanup(func() { _, _ = l.DB().ExecContext(context.Background(), "drop role if exists "+login) })
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte("a long enough password\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	var res struct {
		Login, MemberOf, URL string
		Created              bool
	}
	out := g.mustRun("audit", "role", "--login", login, "--password-file", pwFile)
	if err := json.Unmarshal([]byte(out), &res); err != nil || !res.Created || res.Login != login || res.MemberOf != "gateway_auditor" {
		t.Fatalf("audit role printed %s (%v)", out, err)
	}
	u, err := url.Parse(res.URL)
	if err != nil || u.User.Username() != login {
		t.Errorf("url %q: want one for %s", res.URL, login)
	}
	if _, hasPassword := u.User.Password(); hasPassword {
		t.Errorf("url %q carries a password", res.URL)
	}
	// The auditor logs in with that URL and the password, and reads.
	u.User = url.UserPassword(login, "a long enough password")
	auditor, err := database.OpenDB(context.Background(), u.String(), database.DBOptions{ConnsMax: 1})
	if err != nil {
		t.Fatalf("logging in as the auditor: %v", err)
	}
	var n int
	if err := auditor.QueryRowContext(context.Background(), "select count(*) from bill").Scan(&n); err != nil {
		t.Errorf("the auditor cannot read the bill: %v", err)
	}
	auditor.Close()

	// Again: the password changes, nothing is created.
	out = g.mustRun("audit", "role", "--login", login, "--password-file", pwFile)
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Created {
		t.Errorf("audit role a second time printed %s", out)
	}
	g.mustFail("--login", "audit", "role", "--login", "Not-A-Name", "--password-file", pwFile)
	g.mustFail("--password-file", "audit", "role", "--login", login, "--password-file", filepath.Join(t.TempDir(), "absent"))
	short := filepath.Join(t.TempDir(), "short")
	if err := os.WriteFile(short, []byte("short"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := g.run("audit", "role", "--login", login, "--password-file", short)
	if r.code() != 2 || !strings.Contains(r.err.Error(), "--password-file: the password must be 12 to 1024 characters") ||
		!strings.Contains(r.stderr, "can be read by other users") {
		t.Errorf("a short, readable password file: exit %d, %v, stderr %q", r.code(), r.err, r.stderr)
	}
	g.mustFail("--login and --password-file are required", "audit", "role", "--login", login)
}
