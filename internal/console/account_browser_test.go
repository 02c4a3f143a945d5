package console_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A user's change of their own password on /account (account.go).

const newPassword = "a brand new passphrase"

// postForm sends a form from the page as post does and returns the status
// and the refusal the answer shows (#form-error, or the error page's
// #error); a redirect is status 0, as fetch reports it without following.
func (b *browser) postForm(t *testing.T, path string, form map[string]string) (int, string) {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("fetch(" + jsString(path) + ", {method: 'POST', redirect: 'manual', body: new URLSearchParams({")
	for k, v := range form {
		sb.WriteString(jsString(k) + ": " + jsString(v) + ",")
	}
	sb.WriteString(`})}).then(async r => { const d = new DOMParser().parseFromString(await r.text(), 'text/html');
		const e = d.querySelector('#form-error, #error'); return [r.status, e ? e.textContent : '']; })`)
	v := eval[[]any](t, b, sb.String())
	return int(v[0].(float64)), v[1].(string)
}

// changePassword fills and sends the account form in the page.
func (b *browser) changePassword(t *testing.T, f *fixture, cur, code, pw, again string) {
	t.Helper()
	b.open(t, f.url("/account"))
	b.do(t, chromedp.SendKeys(chromedp.ID("currentPassword"), cur))
	if code != "" {
		b.do(t, chromedp.SendKeys(chromedp.ID("totp"), code))
	}
	b.do(t, chromedp.SendKeys(chromedp.ID("newPassword"), pw), chromedp.SendKeys(chromedp.ID("confirmPassword"), again),
		chromedp.Click(chromedp.ID("change")), chromedp.WaitVisible(chromedp.CSS("#changed, #form-error, #submit")))
}

// userSessions are the token hashes of a user's sessions with their login
// time and absolute end.
func (f *fixture) userSessions(t *testing.T, login string) map[string][2]time.Time {
	t.Helper()
	rows, err := f.g.DB().DB.Query(`select s.token_sha256, s.created_at, s.expires_at from console_sessions s
		join console_users u on u.id = s.user_id where u.login = $1`, login)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][2]time.Time{}
	for rows.Next() {
		var h []byte
		var c, e time.Time
		if err := rows.Scan(&h, &c, &e); err != nil {
			t.Fatal(err)
		}
		out[string(h)] = [2]time.Time{c, e}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// failedCount is a user's count of failures in a row (the lockout's).
func (f *fixture) failedCount(t *testing.T, login string) (n int, locked bool) {
	t.Helper()
	if err := f.g.DB().DB.QueryRow(`select failed_count, coalesce(locked_until > $2, false) from console_users where login = $1`,
		login, f.clock.Now()).Scan(&n, &locked); err != nil {
		t.Fatal(err)
	}
	return n, locked
}

func (f *fixture) passwordHash(t *testing.T, login string) string {
	t.Helper()
	var h string
	if err := f.g.DB().DB.QueryRow(`select password_hash from console_users where login = $1`, login).Scan(&h); err != nil {
		t.Fatal(err)
	}
	return h
}

// A finance user changes their password: the page's form, the old password
// no longer signs in and the new one does, their other session ends while
// this one goes on under a new token (its absolute end kept), one audit row
// with the address and no password; a form without its token changes
// nothing.
func TestUserChangesOwnPassword(t *testing.T) {
	f := newFixture(t)
	other := newBrowser(t)
	other.login(t, f, "fred.finance", "")
	b := newBrowser(t)
	b.login(t, f, "fred.finance", "")
	before := f.userSessions(t, "fred.finance")
	if len(before) != 2 {
		t.Fatalf("fred.finance has %d sessions, want 2", len(before))
	}

	// Without the CSRF token: refused, nothing changed.
	b.open(t, f.url("/account"))
	hash := f.passwordHash(t, "fred.finance")
	if got := b.post(t, "/account/password", map[string]string{"currentPassword": password,
		"newPassword": newPassword, "confirmPassword": newPassword}); got != 403 {
		t.Errorf("change without CSRF: %d, want 403", got)
	}
	if f.passwordHash(t, "fred.finance") != hash {
		t.Fatal("a form without its CSRF token changed the password")
	}

	b.open(t, f.url("/account"))
	if n := eval[int](t, b, `document.querySelectorAll('#totp').length`); n != 0 {
		t.Error("a merchant user is asked for a TOTP code")
	}
	b.shot(t, "account")
	b.changePassword(t, f, password, "", newPassword, newPassword)
	if got := b.text(t, "#changed"); !strings.Contains(got, "other sessions have ended") {
		t.Fatalf("after the change the page says %q", got)
	}
	b.shot(t, "account-changed")

	// This session goes on under a new token; the other one has ended.
	after := f.userSessions(t, "fred.finance")
	if len(after) != 1 {
		t.Fatalf("fred.finance has %d sessions after the change, want 1", len(after))
	}
	for h, times := range after {
		if _, kept := before[h]; kept {
			t.Error("the session's token was not rotated")
		}
		var match bool
		for _, o := range before {
			match = match || (o[0].Equal(times[0]) && o[1].Equal(times[1]))
		}
		if !match {
			t.Errorf("the rotated session's login time and end %v are no old session's %v", times, before)
		}
	}
	if b.open(t, f.url("/balances")); !strings.HasSuffix(b.location(t), "/balances") {
		t.Errorf("the session that changed the password is ended (at %s)", b.location(t))
	}
	if other.open(t, f.url("/balances")); !strings.HasSuffix(other.location(t), "/login") {
		t.Errorf("the other session still opens /balances (at %s)", other.location(t))
	}

	if msg := newBrowser(t).tryLogin(t, f, "fred.finance", password, ""); msg == "" {
		t.Error("the old password still signs in")
	}
	if msg := newBrowser(t).tryLogin(t, f, "fred.finance", newPassword, ""); msg != "" {
		t.Errorf("the new password does not sign in: %s", msg)
	}

	var login, addr, detail string
	var n int
	if err := f.g.DB().DB.QueryRow(`select login, address, detail, count(*) over () from console_audit
		where action = 'account.password' and outcome = 'ok'`).Scan(&login, &addr, &detail, &n); err != nil {
		t.Fatal(err)
	}
	if login != "fred.finance" || addr == "" || n != 1 || detail != "other sessions ended: 1" {
		t.Errorf("audit row: %s from %q, %q, %d rows", login, addr, detail, n)
	}
	var leaked bool
	if err := f.g.DB().DB.QueryRow(`select exists (select 1 from console_audit a where position($1 in a::text) > 0 or position($2 in a::text) > 0)`,
		newPassword, password).Scan(&leaked); err != nil {
		t.Fatal(err)
	}
	if leaked {
		t.Error("a password is in the audit trail")
	}
}

// What the form refuses before any password is checked (400 naming the
// field, nothing counted), and a wrong current password: refused,
// counted with the failed logins toward the one lockout, whose last
// failure ends the session.
func TestAccountPasswordRefusals(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t)
	b.login(t, f, "rita.readonly", "")
	b.open(t, f.url("/account"))
	tok := b.csrf(t)
	form := func(cur, pw, again string) map[string]string {
		return map[string]string{"csrf": tok, "currentPassword": cur, "newPassword": pw, "confirmPassword": again}
	}
	long := strings.Repeat("x", 129)
	for _, c := range []struct {
		name, cur, pw, again, field string
	}{
		{"too short", password, "short pw", "short pw", "newPassword"},
		{"too long", password, long, long, "newPassword"},
		{"128 bytes of 2-byte letters plus one", password, strings.Repeat("é", 64) + "x", strings.Repeat("é", 64) + "x", "newPassword"},
		{"control character", password, "a new passphrase\x01", "a new passphrase\x01", "newPassword"},
		{"newline", password, "a new\npassphrase", "a new\npassphrase", "newPassword"},
		{"DEL", password, "a new passphrase\x7f", "a new passphrase\x7f", "newPassword"},
		{"mismatch", password, newPassword, newPassword + "!", "confirmPassword"},
		{"same as current", password, password, password, "newPassword"},
		{"no current", "", newPassword, newPassword, "currentPassword"},
		{"current too long", long, newPassword, newPassword, "currentPassword"},
	} {
		status, msg := b.postForm(t, "/account/password", form(c.cur, c.pw, c.again))
		if status != 400 || !strings.HasPrefix(msg, c.field+":") {
			t.Errorf("%s: %d %q, want 400 naming %s", c.name, status, msg, c.field)
		}
	}
	if n, _ := f.failedCount(t, "rita.readonly"); n != 0 {
		t.Errorf("malformed forms counted %d failures", n)
	}
	hash := f.passwordHash(t, "rita.readonly")

	// Two wrong passwords at the login form, three here: five in a row.
	for i := 0; i < 2; i++ {
		if msg := newBrowser(t).tryLogin(t, f, "rita.readonly", "wrong password!", ""); msg == "" {
			t.Fatal("a wrong password signed in")
		}
	}
	if status, msg := b.postForm(t, "/account/password", form("wrong password!", newPassword, newPassword)); status != 400 || !strings.HasPrefix(msg, "currentPassword:") {
		t.Errorf("wrong current password: %d %q, want 400 naming currentPassword", status, msg)
	}
	if n, locked := f.failedCount(t, "rita.readonly"); n != 3 || locked {
		t.Errorf("after 2 wrong logins and a wrong current password: %d failures, locked %v; want 3, not locked", n, locked)
	}
	// The page as a wrong current password leaves it (the fourth failure).
	b.changePassword(t, f, "still wrong pass", "", newPassword, newPassword)
	if got := b.text(t, "#form-error"); !strings.HasPrefix(got, "currentPassword:") {
		t.Errorf("the form's refusal: %q", got)
	}
	b.shot(t, "account-refused")
	// The fifth locks the user and ends the session doing it.
	b.changePassword(t, f, "wrong again pass", "", newPassword, newPassword)
	if n, locked := f.failedCount(t, "rita.readonly"); n != 5 || !locked {
		t.Errorf("after the fifth failure: %d failures, locked %v; want 5, locked", n, locked)
	}
	if n := eval[int](t, b, `document.querySelectorAll('#submit').length`); n != 1 {
		t.Error("the fifth failure does not show the login form")
	}
	if b.open(t, f.url("/balances")); !strings.HasSuffix(b.location(t), "/login") {
		t.Errorf("the session that locked its user still opens /balances (at %s)", b.location(t))
	}
	if msg := newBrowser(t).tryLogin(t, f, "rita.readonly", password, ""); msg == "" {
		t.Error("a locked user signed in with the right password")
	}
	if f.passwordHash(t, "rita.readonly") != hash {
		t.Error("the password changed")
	}
	var attempts int
	if err := f.g.DB().DB.QueryRow(`select count(*) from console_login_attempts where login = 'rita.readonly'
		and not ok and reason = 'account_bad_password'`).Scan(&attempts); err != nil {
		t.Fatal(err)
	}
	if attempts != 3 {
		t.Errorf("%d wrong current passwords in console_login_attempts, want 3", attempts)
	}
	acts := f.auditActions(t)
	if k := countOf(acts, "account.password:refused"); k != 3 {
		t.Errorf("audit trail %v: %d account.password refusals, want 3", acts, k)
	}
}

func countOf(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

// An operator changes their password with the current TOTP code too: a
// wrong code, or the code the login just used, is refused and counted; a
// fresh code changes it, and the new password then signs in.
func TestOperatorChangesPasswordWithTOTP(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t)
	used := f.code(t, "olga.operator")
	b.login(t, f, "olga.operator", used)
	b.open(t, f.url("/account"))
	if n := eval[int](t, b, `document.querySelectorAll('#totp').length`); n != 1 {
		t.Fatal("an operator is not asked for a TOTP code")
	}
	tok := b.csrf(t)
	form := func(code string) map[string]string {
		return map[string]string{"csrf": tok, "currentPassword": password, "totp": code, "newPassword": newPassword, "confirmPassword": newPassword}
	}
	for _, code := range []string{"", "12345", "1234567", "abcdef"} {
		if status, msg := b.postForm(t, "/account/password", form(code)); status != 400 || !strings.HasPrefix(msg, "totp:") {
			t.Errorf("code %q: %d %q, want 400 naming totp", code, status, msg)
		}
	}
	if n, _ := f.failedCount(t, "olga.operator"); n != 0 {
		t.Errorf("malformed codes counted %d failures", n)
	}
	wrong := "000000"
	if wrong == used {
		wrong = "000001"
	}
	for _, code := range []string{wrong, used} { // a wrong code; the login's, replayed
		if status, msg := b.postForm(t, "/account/password", form(code)); status != 400 || !strings.HasPrefix(msg, "currentPassword:") {
			t.Errorf("code %q: %d %q, want 400", code, status, msg)
		}
	}
	if n, _ := f.failedCount(t, "olga.operator"); n != 2 {
		t.Errorf("a wrong and a replayed code counted %d failures, want 2", n)
	}

	f.clock.Add(30 * time.Second) // the next code
	b.changePassword(t, f, password, f.code(t, "olga.operator"), newPassword, newPassword)
	if n := eval[int](t, b, `document.querySelectorAll('#changed').length`); n != 1 {
		t.Fatalf("the change with a fresh code is refused: %s", b.text(t, "#form-error"))
	}
	if n, _ := f.failedCount(t, "olga.operator"); n != 0 {
		t.Errorf("the success left %d failures", n)
	}
	f.clock.Add(30 * time.Second)
	if msg := newBrowser(t).tryLogin(t, f, "olga.operator", newPassword, f.code(t, "olga.operator")); msg != "" {
		t.Errorf("the new password does not sign in: %s", msg)
	}
	if acts := f.auditActions(t); !slices.Contains(acts, "account.password:ok") {
		t.Errorf("audit trail %v lacks the change", acts)
	}
}

// Every role has the page and changes its password with it.
func TestEveryRoleChangesOwnPassword(t *testing.T) {
	f := newFixture(t)
	for _, login := range []string{"ann.admin", "fred.finance", "rita.readonly", "olga.operator", "aldo.auditor"} {
		house := f.secrets[login] != ""
		b := newBrowser(t)
		code := ""
		if house {
			code = f.code(t, login)
		}
		hash := f.passwordHash(t, login)
		b.login(t, f, login, code)
		if house {
			f.clock.Add(30 * time.Second)
			code = f.code(t, login)
		}
		if got := eval[string](t, b, `document.querySelector('nav a[href="/account"]') ? 'yes' : 'no'`); got != "yes" {
			t.Errorf("%s: no Account in the menu", login)
		}
		b.changePassword(t, f, password, code, newPassword, newPassword)
		if n := eval[int](t, b, `document.querySelectorAll('#changed').length`); n != 1 {
			t.Errorf("%s: the change is refused: %s", login, b.text(t, "#form-error"))
		}
		if f.passwordHash(t, login) == hash {
			t.Errorf("%s: the password is not changed", login)
		}
	}
}
