package console_test

import (
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// consoleUser reads a console user's merchant, role and disabled flag;
// ok false when there is none of that login.
func (f *fixture) consoleUser(t *testing.T, login string) (id, merchant int64, role string, disabled, ok bool) {
	t.Helper()
	var mid sql.NullInt64
	err := f.g.DB().DB.QueryRow(`select id, merchant_id, role, disabled from console_users where login = $1`, login).
		Scan(&id, &mid, &role, &disabled)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, "", false, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return id, mid.Int64, role, disabled, true
}

// A merchant admin makes a finance user who then signs in with the
// password shown once; disables them (their session ends), enables them,
// resets their password (the old one stops working); and cannot disable
// themselves. Every action is in the audit trail with who and from where.
func TestMerchantAdminManagesUsers(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t)
	b.login(t, f, "ann.admin", "")
	b.open(t, f.url("/users"))
	if got := eval[string](t, b, `[...document.querySelectorAll('#role option')].map(o => o.value).join(',')`); got != "admin,finance,readonly" {
		t.Errorf("roles offered: %s", got)
	}
	b.typeConfirmation(t, f, "ann.admin")
	b.do(t, chromedp.SendKeys(chromedp.ID("login"), "nina@acme"), chromedp.SetValue(chromedp.ID("role"), "finance"),
		chromedp.Click(chromedp.ID("create")), chromedp.WaitVisible(chromedp.ID("new-pw")))
	pw := b.text(t, "#new-pw")
	if len(pw) < 12 {
		t.Fatalf("shown password %q", pw)
	}
	b.shot(t, "users")
	_, merchant, role, _, ok := f.consoleUser(t, "nina@acme")
	if !ok || merchant != f.a.ID || role != "finance" {
		t.Fatalf("nina@acme: ok %v, merchant %d (A is %d), role %s", ok, merchant, f.a.ID, role)
	}
	// The password is shown once: the list again does not show it.
	b.open(t, f.url("/users"))
	if strings.Contains(eval[string](t, b, `document.body.textContent`), pw) {
		t.Error("the password is shown again")
	}

	n := newBrowser(t)
	if msg := n.tryLogin(t, f, "nina@acme", pw, ""); msg != "" {
		t.Fatalf("the new user cannot sign in: %s", msg)
	}
	if who := n.text(t, "#who"); !strings.HasPrefix(who, "nina@acme · finance") {
		t.Errorf("signed in as %q", who)
	}
	if got := n.open(t, f.url("/users")); got != 403 {
		t.Errorf("the finance user on /users: %d, want 403", got)
	}

	// Disable: nina's session ends at once.
	row := `tr[data-login="nina@acme"]`
	b.do(t, chromedp.Click(chromedp.CSS(row+` button.disable`)))
	b.waitJS(t, `document.querySelector('`+row+` td.status').textContent === 'disabled'`)
	if _, _, _, disabled, _ := f.consoleUser(t, "nina@acme"); !disabled {
		t.Error("nina@acme is not disabled in the database")
	}
	if n.open(t, f.url("/balances")); !strings.HasSuffix(n.location(t), "/login") {
		t.Errorf("a disabled user's session still opens /balances (at %s)", n.location(t))
	}
	if msg := n.tryLogin(t, f, "nina@acme", pw, ""); msg == "" {
		t.Error("a disabled user signed in")
	}
	b.clickConfirmed(t, f, "ann.admin", row+` button.enable`)
	b.waitJS(t, `(document.querySelector('`+row+` td.status') || {}).textContent === 'active'`)

	// Reset: a new password shown once, the old one refused.
	b.clickConfirmed(t, f, "ann.admin", row+` button.reset`)
	b.do(t, chromedp.WaitVisible(chromedp.ID("new-pw")))
	pw2 := b.text(t, "#new-pw")
	if pw2 == pw || b.text(t, "#new-login") != "nina@acme" {
		t.Fatalf("reset shows %q for %q", pw2, b.text(t, "#new-login"))
	}
	if msg := n.tryLogin(t, f, "nina@acme", pw, ""); msg == "" {
		t.Error("the old password still signs in")
	}
	if msg := n.tryLogin(t, f, "nina@acme", pw2, ""); msg != "" {
		t.Errorf("the reset password does not sign in: %s", msg)
	}

	// An admin cannot disable themselves: no button, and a posted form is
	// refused.
	annID, _, _, _, _ := f.consoleUser(t, "ann.admin")
	b.open(t, f.url("/users"))
	if k := eval[int](t, b, `document.querySelectorAll('tr[data-login="ann.admin"] button').length`); k != 0 {
		t.Errorf("the admin's own row has %d buttons", k)
	}
	for _, action := range []string{"disable", "password"} {
		if got := b.post(t, "/users/"+strconv.FormatInt(annID, 10)+"/"+action, map[string]string{"csrf": b.csrf(t)}); got != 409 {
			t.Errorf("%s of oneself: %d, want 409", action, got)
		}
	}
	if _, _, _, disabled, _ := f.consoleUser(t, "ann.admin"); disabled {
		t.Fatal("the admin disabled themselves")
	}

	acts := f.auditActions(t)
	for _, want := range []string{"user.create:ok", "user.disable:ok", "user.enable:ok", "user.password_reset:ok", "user.disable:refused"} {
		if !slices.Contains(acts, want) {
			t.Errorf("audit trail %v lacks %s", acts, want)
		}
	}
	var login, target, addr string
	var merchantOf int64
	if err := f.g.DB().DB.QueryRow(`select login, target, address, merchant_id from console_audit where action = 'user.create'`).
		Scan(&login, &target, &addr, &merchantOf); err != nil {
		t.Fatal(err)
	}
	if login != "ann.admin" || target != "nina@acme" || addr == "" || merchantOf != f.a.ID {
		t.Errorf("user.create audit row: by %s, target %s, address %q, merchant %d", login, target, addr, merchantOf)
	}
}

// What a merchant's users page refuses: a finance user (403, nothing
// made), a house role or another merchant by an edited form (the role
// refused, the merchant never read), another merchant's user or a house
// user by an edited URL (the same 404 as an unknown one).
func TestMerchantUsersRefusals(t *testing.T) {
	f := newFixture(t)
	fin := newBrowser(t)
	fin.login(t, f, "fred.finance", "")
	if got := fin.open(t, f.url("/users")); got != 403 {
		t.Errorf("finance on /users: %d, want 403", got)
	}
	fin.open(t, f.url("/balances"))
	if got := fin.post(t, "/users", map[string]string{"csrf": fin.csrf(t), "login": "mallory", "role": "admin"}); got != 403 {
		t.Errorf("finance creating a user: %d, want 403", got)
	}
	bobID, _, _, _, _ := f.consoleUser(t, "bob.admin")
	if got := fin.post(t, "/users/"+strconv.FormatInt(bobID, 10)+"/disable", map[string]string{"csrf": fin.csrf(t)}); got != 403 {
		t.Errorf("finance disabling a user: %d, want 403", got)
	}
	if _, _, _, _, ok := f.consoleUser(t, "mallory"); ok {
		t.Error("a finance user made a user")
	}

	b := newBrowser(t)
	b.login(t, f, "ann.admin", "")
	b.open(t, f.url("/users"))
	tok := b.csrf(t)
	// The form edited to name merchant B: the user is A's, whatever it says.
	if got := b.post(t, "/users", f.withConfirm(t, "ann.admin", map[string]string{"csrf": tok, "login": "eve@bolt", "role": "admin",
		"shopNo": f.b.ShopNo, "merchant": f.b.ShopNo, "merchantId": strconv.FormatInt(f.b.ID, 10), "merchant_id": strconv.FormatInt(f.b.ID, 10)})); got != 200 {
		t.Errorf("create with an edited merchant: %d", got)
	}
	if _, m, _, _, ok := f.consoleUser(t, "eve@bolt"); !ok || m != f.a.ID {
		t.Errorf("eve@bolt: made %v, merchant %d; want merchant A (%d), never B (%d)", ok, m, f.a.ID, f.b.ID)
	}
	// Roles of the house, or none, are refused and nothing is made.
	for _, role := range []string{"operator", "auditor", "root", ""} {
		login := "x" + role + "@acme"
		if got := b.post(t, "/users", map[string]string{"csrf": tok, "login": login, "role": role}); got != 400 {
			t.Errorf("role %q: %d, want 400", role, got)
		}
		if _, _, _, _, ok := f.consoleUser(t, login); ok {
			t.Errorf("role %q: a user was made", role)
		}
	}
	// Bad logins are refused naming the field.
	if got := b.post(t, "/users", map[string]string{"csrf": tok, "login": "Ёve\x01", "role": "finance"}); got != 400 {
		t.Errorf("a bad login: %d, want 400", got)
	}
	// Without the CSRF token nothing is made.
	if got := b.post(t, "/users", map[string]string{"login": "nocsrf", "role": "finance"}); got != 403 {
		t.Errorf("create without CSRF: %d, want 403", got)
	}
	if _, _, _, _, ok := f.consoleUser(t, "nocsrf"); ok {
		t.Error("a form without its CSRF token made a user")
	}

	// Another merchant's user, a house user and an unknown id: one 404.
	olgaID, _, _, _, _ := f.consoleUser(t, "olga.operator")
	var bodies []string
	for _, id := range []int64{bobID, olgaID, 99_999_999} {
		path := "/users/" + strconv.FormatInt(id, 10) + "/disable"
		if got := b.post(t, path, map[string]string{"csrf": tok}); got != 404 {
			t.Errorf("%s: %d, want 404", path, got)
		}
		bodies = append(bodies, eval[string](t, b, `fetch('/users/`+strconv.FormatInt(id, 10)+`/password', {method: 'POST', body: new URLSearchParams({csrf: `+jsString(tok)+`})}).then(r => r.text())`))
	}
	if bodies[0] != bodies[2] || bodies[1] != bodies[2] {
		t.Error("another merchant's user and an unknown id answer differently")
	}
	for _, login := range []string{"bob.admin", "olga.operator"} {
		if _, _, _, disabled, _ := f.consoleUser(t, login); disabled {
			t.Errorf("%s was disabled", login)
		}
	}
	if msg := newBrowser(t).tryLogin(t, f, "bob.admin", password, ""); msg != "" {
		t.Errorf("bob.admin's password changed: %s", msg)
	}
	acts := f.auditActions(t)
	if !slices.Contains(acts, "user.create:refused") {
		t.Errorf("audit trail %v lacks the refused role", acts)
	}
}
