package console_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paygate/gateway/internal/console"
)

// An operator manages the house's users on /house/users (house_users.go).

// houseCreate creates a house user through the page and returns what it
// shows once: the password and the TOTP secret and URI.
func (b *browser) houseCreate(t *testing.T, f *fixture, login, role string) (pw, secret, uri string) {
	t.Helper()
	b.open(t, f.url("/house/users"))
	b.typeConfirmation(t, f, "olga.operator")
	b.do(t, chromedp.SendKeys(chromedp.ID("login"), login), chromedp.SetValue(chromedp.ID("role"), role),
		chromedp.Click(chromedp.ID("create")), chromedp.WaitVisible(chromedp.ID("new-pw")))
	return b.text(t, "#new-pw"), b.text(t, "#new-totp-secret"), b.text(t, "#new-totp-uri")
}

// An operator creates an operator and an auditor, each with a password,
// TOTP secret and otpauth URI shown once, who then sign in with them;
// disables the operator (the session ends), enables them, resets the
// password (the old one refused, the new one and the same secret sign
// in); cannot disable or reset themselves. Every action is in the audit
// trail, with no merchant.
func TestOperatorManagesHouseUsers(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t)
	b.login(t, f, "olga.operator", f.code(t, "olga.operator"))
	b.open(t, f.url("/house/users"))
	if got := eval[string](t, b, `[...document.querySelectorAll('#role option')].map(o => o.value).join(',')`); got != "operator,auditor" {
		t.Errorf("roles offered: %s", got)
	}
	if got := eval[string](t, b, `[...document.querySelectorAll('#users tr[data-login]')].map(r => r.dataset.login).join(',')`); got != "aldo.auditor,olga.operator" {
		t.Errorf("house users listed: %s (no merchant's user belongs here)", got)
	}
	pw, secret, uri := b.houseCreate(t, f, "ivan.ops", "operator")
	if len(pw) < 12 || len(secret) != 32 || !strings.HasPrefix(uri, "otpauth://totp/") || !strings.Contains(uri, "secret="+secret) {
		t.Fatalf("shown once: password %q, secret %q, uri %q", pw, secret, uri)
	}
	b.shot(t, "house-users")
	_, merchant, role, _, ok := f.consoleUser(t, "ivan.ops")
	if !ok || merchant != 0 || role != "operator" {
		t.Fatalf("ivan.ops: made %v, merchant %d, role %s", ok, merchant, role)
	}
	b.open(t, f.url("/house/users"))
	if body := eval[string](t, b, `document.body.textContent`); strings.Contains(body, pw) || strings.Contains(body, secret) {
		t.Error("the password or the secret is shown again")
	}
	code := func(secret string) string {
		c, err := console.TOTPCode(secret, f.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	n := newBrowser(t)
	if msg := n.tryLogin(t, f, "ivan.ops", pw, code(secret)); msg != "" {
		t.Fatalf("the new operator cannot sign in: %s", msg)
	}
	if who := n.text(t, "#who"); !strings.HasPrefix(who, "ivan.ops · operator") {
		t.Errorf("signed in as %q", who)
	}
	apw, asecret, _ := b.houseCreate(t, f, "aida.audit", "auditor")
	if msg := newBrowser(t).tryLogin(t, f, "aida.audit", apw, code(asecret)); msg != "" {
		t.Errorf("the new auditor cannot sign in: %s", msg)
	}

	// Disable: ivan's session ends at once; Enable.
	row := `tr[data-login="ivan.ops"]`
	b.open(t, f.url("/house/users"))
	b.do(t, chromedp.Click(chromedp.CSS(row+` button.disable`)))
	b.waitJS(t, `document.querySelector('`+row+` td.status').textContent === 'disabled'`)
	if n.open(t, f.url("/operator/merchants")); !strings.HasSuffix(n.location(t), "/login") {
		t.Errorf("a disabled operator's session still opens the merchants (at %s)", n.location(t))
	}
	b.clickConfirmed(t, f, "olga.operator", row+` button.enable`)
	b.waitJS(t, `(document.querySelector('`+row+` td.status') || {}).textContent === 'active'`)

	// Reset: a new password shown once, no new secret; the old password
	// refused, the new one with the same secret signs in.
	b.clickConfirmed(t, f, "olga.operator", row+` button.reset`)
	b.do(t, chromedp.WaitVisible(chromedp.ID("new-pw")))
	pw2 := b.text(t, "#new-pw")
	if pw2 == pw || b.text(t, "#new-login") != "ivan.ops" {
		t.Fatalf("reset shows %q for %q", pw2, b.text(t, "#new-login"))
	}
	if k := eval[int](t, b, `document.querySelectorAll('#new-totp-secret').length`); k != 0 {
		t.Error("a reset shows a TOTP secret")
	}
	f.clock.Add(30 * time.Second)
	if msg := newBrowser(t).tryLogin(t, f, "ivan.ops", pw, code(secret)); msg == "" {
		t.Error("the old password still signs in")
	}
	f.clock.Add(30 * time.Second)
	if msg := newBrowser(t).tryLogin(t, f, "ivan.ops", pw2, code(secret)); msg != "" {
		t.Errorf("the reset password does not sign in: %s", msg)
	}

	// An operator cannot disable or reset themselves.
	olgaID, _, _, _, _ := f.consoleUser(t, "olga.operator")
	b.open(t, f.url("/house/users"))
	if k := eval[int](t, b, `document.querySelectorAll('tr[data-login="olga.operator"] button').length`); k != 0 {
		t.Errorf("the operator's own row has %d buttons", k)
	}
	for _, action := range []string{"disable", "password"} {
		if got := b.post(t, "/house/users/"+strconv.FormatInt(olgaID, 10)+"/"+action, map[string]string{"csrf": b.csrf(t)}); got != 409 {
			t.Errorf("%s of oneself: %d, want 409", action, got)
		}
	}
	if _, _, _, disabled, _ := f.consoleUser(t, "olga.operator"); disabled {
		t.Fatal("the operator disabled themselves")
	}

	acts := f.auditActions(t)
	for _, want := range []string{"user.create:ok", "user.disable:ok", "user.enable:ok", "user.password_reset:ok", "user.disable:refused", "user.password_reset:refused"} {
		if !slices.Contains(acts, want) {
			t.Errorf("audit trail %v lacks %s", acts, want)
		}
	}
	var login, target, addr string
	var noMerchant bool
	if err := f.g.DB().DB.QueryRow(`select login, target, address, merchant_id is null from console_audit
		where action = 'user.create' and target = 'ivan.ops'`).Scan(&login, &target, &addr, &noMerchant); err != nil {
		t.Fatal(err)
	}
	if login != "olga.operator" || addr == "" || !noMerchant {
		t.Errorf("user.create audit row: by %s, address %q, no merchant %v", login, addr, noMerchant)
	}
}

// What the house users page refuses: a merchant's admin and an auditor
// (403 on the page and every form, nothing done); merchant roles (400,
// nothing made); a merchant field added to the form (never read); a
// merchant's user by an edited URL (the same 404 as an unknown id); a
// form without its CSRF token.
func TestHouseUsersRefusals(t *testing.T) {
	f := newFixture(t)
	olgaID, _, _, _, _ := f.consoleUser(t, "olga.operator")
	annID, _, _, _, _ := f.consoleUser(t, "ann.admin")
	for _, who := range []string{"ann.admin", "aldo.auditor"} {
		x := newBrowser(t)
		code := ""
		if f.secrets[who] != "" {
			code = f.code(t, who)
		}
		x.login(t, f, who, code)
		if got := x.open(t, f.url("/house/users")); got != 403 {
			t.Errorf("%s on /house/users: %d, want 403", who, got)
		}
		if got := x.post(t, "/house/users", map[string]string{"csrf": x.csrf(t), "login": "mallory", "role": "operator"}); got != 403 {
			t.Errorf("%s creating a house user: %d, want 403", who, got)
		}
		for _, action := range []string{"disable", "password"} {
			if got := x.post(t, "/house/users/"+strconv.FormatInt(olgaID, 10)+"/"+action, map[string]string{"csrf": x.csrf(t)}); got != 403 {
				t.Errorf("%s: %s of a house user: %d, want 403", who, action, got)
			}
		}
		if n := eval[int](t, x, `document.querySelectorAll('nav a[href="/house/users"]').length`); n != 0 {
			t.Errorf("%s is offered House users in the menu", who)
		}
	}
	if _, _, _, _, ok := f.consoleUser(t, "mallory"); ok {
		t.Error("a merchant admin or an auditor made a house user")
	}
	if _, _, _, disabled, _ := f.consoleUser(t, "olga.operator"); disabled {
		t.Error("olga.operator was disabled")
	}

	b := newBrowser(t)
	b.login(t, f, "olga.operator", f.code(t, "olga.operator"))
	b.open(t, f.url("/house/users"))
	tok := b.csrf(t)
	for _, role := range []string{"admin", "finance", "readonly", "root", ""} {
		login := "x" + role + ".house"
		if status, msg := b.postForm(t, "/house/users", map[string]string{"csrf": tok, "login": login, "role": role,
			"shopNo": f.a.ShopNo}); status != 400 || !strings.HasPrefix(msg, "role:") {
			t.Errorf("role %q: %d %q, want 400 naming role", role, status, msg)
		}
		if _, _, _, _, ok := f.consoleUser(t, login); ok {
			t.Errorf("role %q: a user was made", role)
		}
	}
	// A merchant added to the form is never read: the user is the house's.
	if got := b.post(t, "/house/users", f.withConfirm(t, "olga.operator", map[string]string{"csrf": tok, "login": "eve.house", "role": "auditor",
		"shopNo": f.a.ShopNo, "merchantId": strconv.FormatInt(f.a.ID, 10)})); got != 200 {
		t.Errorf("create with an added merchant: %d", got)
	}
	if _, m, _, _, ok := f.consoleUser(t, "eve.house"); !ok || m != 0 {
		t.Errorf("eve.house: made %v, merchant %d; want the house's", ok, m)
	}
	if status, msg := b.postForm(t, "/house/users", map[string]string{"csrf": tok, "login": "Ёve\x01", "role": "operator"}); status != 400 || !strings.HasPrefix(msg, "login:") {
		t.Errorf("a bad login: %d %q, want 400 naming login", status, msg)
	}
	if got := b.post(t, "/house/users", f.withConfirm(t, "olga.operator", map[string]string{"csrf": tok, "login": "olga.operator", "role": "operator"})); got != 409 {
		t.Errorf("a login taken: %d, want 409", got)
	}
	if got := b.post(t, "/house/users", map[string]string{"login": "nocsrf", "role": "operator"}); got != 403 {
		t.Errorf("create without CSRF: %d, want 403", got)
	}
	if _, _, _, _, ok := f.consoleUser(t, "nocsrf"); ok {
		t.Error("a form without its CSRF token made a user")
	}
	aldoID, _, _, _, _ := f.consoleUser(t, "aldo.auditor")
	if got := b.post(t, "/house/users/"+strconv.FormatInt(aldoID, 10)+"/disable", nil); got != 403 {
		t.Errorf("disable without CSRF: %d, want 403", got)
	}
	// A merchant's user and an unknown id: one 404.
	var bodies []string
	for _, id := range []int64{annID, 99_999_999} {
		path := "/house/users/" + strconv.FormatInt(id, 10) + "/password"
		status, body := b.postForm(t, path, map[string]string{"csrf": tok})
		if status != 404 {
			t.Errorf("%s: %d, want 404", path, status)
		}
		bodies = append(bodies, body)
	}
	if bodies[0] != bodies[1] {
		t.Errorf("a merchant's user and an unknown id answer differently: %q, %q", bodies[0], bodies[1])
	}
	if _, _, _, disabled, _ := f.consoleUser(t, "aldo.auditor"); disabled {
		t.Error("aldo.auditor was disabled")
	}
	if msg := newBrowser(t).tryLogin(t, f, "ann.admin", password, ""); msg != "" {
		t.Errorf("ann.admin's password changed: %s", msg)
	}
	// The action's URL opened with GET goes back to the page.
	b.open(t, f.url("/house/users/"+strconv.FormatInt(aldoID, 10)+"/disable"))
	if !strings.HasSuffix(b.location(t), "/house/users") {
		t.Errorf("GET of an action: at %s", b.location(t))
	}
	acts := f.auditActions(t)
	if !slices.Contains(acts, "user.create:refused") || !slices.Contains(acts, "request.refused:refused") {
		t.Errorf("audit trail %v lacks the refusals", acts)
	}
}
