package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var newPasswordRE = regexp.MustCompile(`<code id="new-pw">([^<]+)</code>`)

// Step-up (issue 27, point 7): creating a user, enabling one and resetting
// a password ask for the actor's password (and code) again, checked as a
// login is, with the same lockout.

func TestLastingPowerAsksForThePassword(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct{ actor, page, role, target string }{
		{"ann.admin", "/users", "finance", "rita.readonly"},
		{"olga.operator", "/house/users", "auditor", "aldo.auditor"},
	} {
		c := f.signedIn(t, tc.actor)
		id := strconv.Itoa(f.count(t, `select id from console_users where login = $1`, tc.target))
		var before string
		if err := f.g.DB().DB.QueryRow(`select password_hash from console_users where login = $1`, tc.target).Scan(&before); err != nil {
			t.Fatal(err)
		}
		create := url.Values{"login": {"new." + tc.role}, "role": {tc.role}}
		// Without the confirmation: refused naming the field, nothing made,
		// nothing counted.
		if a, err := f.post(c, tc.page, tc.page, create); err != nil || a.status != 400 || !strings.Contains(a.body, "currentPassword:") {
			t.Errorf("%s: create without the password: %d %v", tc.actor, a.status, err)
		}
		// Enable and reset without it: a page that asks for it; nothing done.
		for _, action := range []string{"enable", "password"} {
			a, err := f.post(c, tc.page, tc.page+"/"+id+"/"+action, nil)
			if err != nil || a.status != 200 || !strings.Contains(a.body, `id="stepup-form"`) {
				t.Errorf("%s: %s without the password: %d %v", tc.actor, action, a.status, err)
			}
		}
		// A wrong password: refused, and counted as a failed login.
		wrong := cloneValues(create)
		for k, v := range f.confirmFields(t, tc.actor) {
			wrong.Set(k, v)
		}
		wrong.Set("currentPassword", "wrong password!")
		if a, err := f.post(c, tc.page, tc.page, wrong); err != nil || a.status != 400 {
			t.Errorf("%s: create with a wrong password: %d %v", tc.actor, a.status, err)
		}
		if n := f.count(t, `select failed_count from console_users where login = $1`, tc.actor); n != 1 {
			t.Errorf("%s: failed_count %d after a wrong confirmation, want 1", tc.actor, n)
		}
		if n := f.count(t, `select count(*) from console_users where login = $1`, "new."+tc.role); n != 0 {
			t.Errorf("%s: a user was made without the password", tc.actor)
		}
		var after string
		if err := f.g.DB().DB.QueryRow(`select password_hash from console_users where login = $1`, tc.target).Scan(&after); err != nil || after != before {
			t.Errorf("%s: %s's password changed without a confirmation", tc.actor, tc.target)
		}
		// Right: done, and the count cleared.
		ok := cloneValues(create)
		for k, v := range f.confirmFields(t, tc.actor) {
			ok.Set(k, v)
		}
		if a, err := f.post(c, tc.page, tc.page, ok); err != nil || a.status != 200 || !strings.Contains(a.body, `id="new-pw"`) {
			t.Errorf("%s: create with the password: %d %v", tc.actor, a.status, err)
		}
		reset := url.Values{}
		for k, v := range f.confirmFields(t, tc.actor) {
			reset.Set(k, v)
		}
		if a, err := f.post(c, tc.page, tc.page+"/"+id+"/password", reset); err != nil || a.status != 200 || !strings.Contains(a.body, `id="new-pw"`) {
			t.Errorf("%s: reset with the password: %d %v", tc.actor, a.status, err)
		}
		if n := f.count(t, `select failed_count from console_users where login = $1`, tc.actor); n != 0 {
			t.Errorf("%s: failed_count %d after a right confirmation", tc.actor, n)
		}
	}
	if n := f.count(t, `select count(*) from console_login_attempts where reason = 'stepup_bad_password'`); n != 2 {
		t.Errorf("%d stepup_bad_password attempts, want 2", n)
	}
}

// Wrong confirmations lock the actor as wrong logins do, and the one that
// locks ends the session.
func TestStepUpFailuresLockTheActor(t *testing.T) {
	f := newFixture(t)
	c := f.signedIn(t, "ann.admin")
	id := strconv.Itoa(f.count(t, `select id from console_users where login = 'rita.readonly'`))
	for i := 0; i < f.lockFailures; i++ {
		a, err := f.post(c, "/users", "/users/"+id+"/password", url.Values{"currentPassword": {"wrong password!"}})
		if err != nil {
			t.Fatal(err)
		}
		last := i == f.lockFailures-1
		if last != (a.status == http.StatusSeeOther && a.header.Get("Location") == "/login") {
			t.Errorf("confirmation %d: %d %s", i+1, a.status, a.header.Get("Location"))
		}
	}
	if n := f.count(t, `select count(*) from console_sessions`); n != 0 {
		t.Errorf("%d sessions after the lock", n)
	}
	if a, err := f.post(f.clientFrom(t, "127.0.0.1"), "/login", "/login", f.loginForm(t, "ann.admin", password, "")); err != nil || a.status != 401 {
		t.Errorf("the locked actor signs in: %d %v", a.status, err)
	}
}

// Logins are unique per scope (issue 27, 8a): a merchant admin makes users
// named like a house user and another merchant's without learning that
// they exist, and each signs in with its own shop number.
func TestLoginsArePerScope(t *testing.T) {
	f := newFixture(t)
	c := f.signedIn(t, "ann.admin")
	pws := map[string]string{}
	for _, login := range []string{"olga.operator", "bob.admin"} {
		form := f.withConfirm(t, "ann.admin", map[string]string{"login": login, "role": "finance"})
		v := url.Values{}
		for k, x := range form {
			v.Set(k, x)
		}
		a, err := f.post(c, "/users", "/users", v)
		m := newPasswordRE.FindStringSubmatch(a.body)
		if err != nil || a.status != 200 || m == nil {
			t.Fatalf("A's admin creates %s: %d %v", login, a.status, err)
		}
		pws[login] = m[1]
	}
	// The same login twice in one scope is the one conflict.
	v := url.Values{}
	for k, x := range f.withConfirm(t, "ann.admin", map[string]string{"login": "fred.finance", "role": "finance"}) {
		v.Set(k, x)
	}
	if a, err := f.post(c, "/users", "/users", v); err != nil || a.status != 409 {
		t.Errorf("a login of the same merchant: %d %v, want 409", a.status, err)
	}
	for _, tc := range []struct {
		name string
		form url.Values
	}{
		{"A's olga.operator", url.Values{"shopNo": {f.a.ShopNo}, "login": {"olga.operator"}, "password": {pws["olga.operator"]}}},
		{"A's bob.admin", url.Values{"shopNo": {f.a.ShopNo}, "login": {"bob.admin"}, "password": {pws["bob.admin"]}}},
		{"B's bob.admin", url.Values{"shopNo": {f.b.ShopNo}, "login": {"bob.admin"}, "password": {password}}},
		{"the house's olga.operator", url.Values{"login": {"olga.operator"}, "password": {password}, "totp": {f.code(t, "olga.operator")}}},
	} {
		if a, err := f.post(f.clientFrom(t, "127.0.0.1"), "/login", "/login", tc.form); err != nil || a.status != http.StatusSeeOther {
			t.Errorf("%s signs in: %d %v", tc.name, a.status, err)
		}
	}
	// A's users' passwords open no other scope's user of the login.
	if a, err := f.post(f.clientFrom(t, "127.0.0.1"), "/login", "/login",
		url.Values{"shopNo": {f.b.ShopNo}, "login": {"bob.admin"}, "password": {pws["bob.admin"]}}); err != nil || a.status != 401 {
		t.Errorf("A's bob.admin's password as B's: %d %v", a.status, err)
	}
}
