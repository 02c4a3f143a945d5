package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/console"
)

// The lockout under concurrency (issue 27, point 2): a try is counted
// before its password is checked, atomically, so a burst checks no more
// passwords than the limits, whatever the concurrency.

// burst sends forms to /login at once, form i from 127.0.0.(i+2) unless
// oneAddress, and returns their answers in order. Every client first loads
// the form (its CSRF token), then all post together.
func (f *fixture) burst(t *testing.T, forms []url.Values, oneAddress bool) []answer {
	t.Helper()
	type ready struct {
		c   *http.Client
		tok string
	}
	rs := make([]ready, len(forms))
	for i := range forms {
		ip := "127.0.0.1"
		if !oneAddress {
			ip = fmt.Sprintf("127.0.0.%d", i+2)
		}
		c := f.clientFrom(t, ip)
		tok, err := getForm(c, f.srv.URL, "/login")
		if err != nil {
			t.Fatal(err)
		}
		rs[i] = ready{c, tok}
	}
	out := make([]answer, len(forms))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range forms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			form := cloneValues(forms[i])
			form.Set("csrf", rs[i].tok)
			<-start
			a, err := f.post(rs[i].c, "/login", "/login", form)
			if err != nil {
				t.Errorf("try %d: %v", i, err)
			}
			out[i] = a
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// reasons counts the attempt rows by reason.
func (f *fixture) reasons(t *testing.T) map[string]int {
	t.Helper()
	rows, err := f.g.DB().DB.Query(`select reason, count(*) from console_login_attempts group by reason`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var r string
		var n int
		if err := rows.Scan(&r, &n); err != nil {
			t.Fatal(err)
		}
		out[r] = n
	}
	return out
}

// checked is how many tries had their password checked: every reason but
// those refused before (locked, address limited, unknown, malformed).
func checked(rs map[string]int) int {
	return rs["bad_password"] + rs["ok"] + rs["concurrent"] + rs["bad_totp"] + rs["disabled"] + rs["totp_replayed"]
}

// 30 wrong passwords of one user at once, from 30 addresses: at most the
// lockout's 5 are checked, the rest refused as locked.
func TestBurstChecksAtMostTheLockoutTries(t *testing.T) {
	f := newFixtureWith(t, func(c *console.Config) { c.HashConcurrency = 64 })
	var forms []url.Values
	for i := 0; i < 30; i++ {
		forms = append(forms, f.loginForm(t, "rita.readonly", fmt.Sprintf("wrong password %d", i), ""))
	}
	for i, a := range f.burst(t, forms, false) {
		if a.status != http.StatusUnauthorized {
			t.Errorf("try %d: %d, want 401", i, a.status)
		}
	}
	rs := f.reasons(t)
	if n := checked(rs); n > f.lockFailures || rs["locked"] != 30-n {
		t.Errorf("attempts %v: %d passwords checked, the limit is %d", rs, n, f.lockFailures)
	}
	if n := f.count(t, `select failed_count from console_users where login = 'rita.readonly'`); n != f.lockFailures {
		t.Errorf("failed_count %d, want %d", n, f.lockFailures)
	}
}

// 29 wrong passwords and the right one at once: the right one does not
// sign in (past the limit it is not checked; inside it, it ran beside
// other tries), and counts as a try. Alone, after the lockout, it does.
func TestRightPasswordInABurstDoesNotSignIn(t *testing.T) {
	f := newFixtureWith(t, func(c *console.Config) { c.HashConcurrency = 64 })
	// The tries that got a slot wait before their hash until the others
	// are answered: the burst is as concurrent as it can be.
	gate := make(chan struct{})
	var held atomic.Int32
	t.Cleanup(console.HoldBeforeHash(gate, func() { held.Add(1) }))
	var forms []url.Values
	right := 17
	for i := 0; i < 30; i++ {
		pw := fmt.Sprintf("wrong password %d", i)
		if i == right {
			pw = password
		}
		forms = append(forms, f.loginForm(t, "rita.readonly", pw, ""))
	}
	go func() {
		// Every slot is taken (5 held), or the lock refused the rest.
		for held.Load() < int32(f.lockFailures) {
			time.Sleep(time.Millisecond)
		}
		close(gate)
	}()
	as := f.burst(t, forms, false)
	if as[right].status == http.StatusSeeOther {
		t.Fatal("the right password signed in inside a burst of wrong ones")
	}
	if n := f.count(t, `select count(*) from console_sessions`); n != 0 {
		t.Errorf("%d sessions", n)
	}
	rs := f.reasons(t)
	if rs["ok"] != 0 || checked(rs) > f.lockFailures {
		t.Errorf("attempts %v", rs)
	}
	f.clock.Add(16 * time.Minute) // past the lockout
	c := f.clientFrom(t, "127.0.0.1")
	if a, err := f.post(c, "/login", "/login", forms[right]); err != nil || a.status != http.StatusSeeOther {
		t.Errorf("the right password alone after the lockout: %d %v", a.status, err)
	}
}

// 40 tries at once from one address, each of another login: at most the
// address's 20 are checked, the others refused (429) before any hash.
func TestBurstFromOneAddressChecksAtMostTheAddressLimit(t *testing.T) {
	f := newFixtureWith(t, func(c *console.Config) { c.HashConcurrency = 64 })
	var forms []url.Values
	for i := 0; i < 40; i++ {
		forms = append(forms, url.Values{"login": {fmt.Sprintf("nobody.%d", i)}, "password": {"wrong password!"}})
	}
	before := console.HashChecks()
	limited := 0
	for _, a := range f.burst(t, forms, true) {
		if a.status == http.StatusTooManyRequests {
			limited++
			if a.header.Get("Retry-After") == "" {
				t.Error("a 429 without Retry-After")
			}
		}
	}
	rs := f.reasons(t)
	if tried := 40 - rs["address_limited"]; tried > console.AddressFailuresDefault || limited != 40-console.AddressFailuresDefault {
		t.Errorf("attempts %v, %d answered 429: %d tries went past the address limit of %d", rs, limited, tried, console.AddressFailuresDefault)
	}
	if n := console.HashChecks() - before; n > console.AddressFailuresDefault {
		t.Errorf("%d hashes for a burst the address limit bounds at %d", n, console.AddressFailuresDefault)
	}
}

// With every place among the hashes taken, a login is a 503 with
// Retry-After, recorded nowhere (nothing was checked); once they free,
// the same login signs in.
func TestBusyHashingIs503(t *testing.T) {
	f := newFixtureWith(t, func(c *console.Config) { c.HashConcurrency = 2 })
	release := console.FillHashSlots(f.console)
	c := f.clientFrom(t, "127.0.0.1")
	form := f.loginForm(t, "ann.admin", password, "")
	a, err := f.post(c, "/login", "/login", form)
	release()
	if err != nil || a.status != http.StatusServiceUnavailable || a.header.Get("Retry-After") == "" {
		t.Fatalf("login with the hashes busy: %d, Retry-After %q, %v", a.status, a.header.Get("Retry-After"), err)
	}
	if n := f.count(t, `select count(*) from console_login_attempts`); n != 0 {
		t.Errorf("%d attempts recorded for a login never checked", n)
	}
	if a, err := f.post(c, "/login", "/login", form); err != nil || a.status != http.StatusSeeOther {
		t.Errorf("login once the hashes free: %d %v", a.status, err)
	}
}

// One argon2 hash per try whatever the state of the login (issue 27, 8b):
// counted, not timed.
func TestEveryLoginCostsOneHash(t *testing.T) {
	f := newFixture(t)
	// rita locked, fred disabled.
	for i := 0; i < f.lockFailures; i++ {
		if a, err := f.post(f.clientFrom(t, "127.0.0.1"), "/login", "/login", f.loginForm(t, "rita.readonly", "wrong password!", "")); err != nil || a.status != 401 {
			t.Fatalf("locking rita: %d %v", a.status, err)
		}
	}
	if _, err := f.g.DB().DB.Exec(`update console_users set disabled = true where login = 'fred.finance'`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		form url.Values
		want int
	}{
		{"unknown login", url.Values{"login": {"nobody.here"}, "password": {password}}, 401},
		{"unknown shop number", url.Values{"shopNo": {"SH0000000000"}, "login": {"ann.admin"}, "password": {password}}, 401},
		{"a merchant's user without its shop", url.Values{"login": {"ann.admin"}, "password": {password}}, 401},
		{"wrong password", f.loginForm(t, "ann.admin", "wrong password!", ""), 401},
		{"locked", f.loginForm(t, "rita.readonly", password, ""), 401},
		{"disabled", f.loginForm(t, "fred.finance", password, ""), 401},
		{"right", f.loginForm(t, "bob.admin", password, ""), 303},
	} {
		before := console.HashChecks()
		a, err := f.post(f.clientFrom(t, "127.0.0.1"), "/login", "/login", tc.form)
		if n := console.HashChecks() - before; err != nil || a.status != tc.want || n != 1 {
			t.Errorf("%s: %d %v, %d hashes; want %d and 1 hash", tc.name, a.status, err, n, tc.want)
		}
	}
}

// The text typed in the login box is stored only when it names a user
// (issue 27, 8c): a password typed in the wrong box is not kept.
func TestAttemptsKeepOnlyUsersLogins(t *testing.T) {
	f := newFixture(t)
	c := f.clientFrom(t, "127.0.0.1")
	for _, form := range []url.Values{
		{"login": {"hunter2-my-password"}, "password": {"x"}},
		f.loginForm(t, "ann.admin", "wrong password!", ""),
		{"shopNo": {f.b.ShopNo}, "login": {"ann.admin"}, "password": {password}}, // A's user under B: no one
	} {
		if _, err := f.post(c, "/login", "/login", form); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := f.g.DB().DB.Query(`select login, reason from console_login_attempts order by id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var l, r string
		if err := rows.Scan(&l, &r); err != nil {
			t.Fatal(err)
		}
		got = append(got, l+":"+r)
	}
	if want := ":unknown_login,ann.admin:bad_password,:unknown_login"; strings.Join(got, ",") != want {
		t.Errorf("attempts %v, want %s", got, want)
	}
}

// Bytes no login can hold — invalid UTF-8, NUL, a surrogate, in the login
// or the shop number — are the login page's refusal (400), counted
// against the address like any failed try (issue 27, point 5).
func TestMalformedLoginBytesAreTheLoginRefusal(t *testing.T) {
	f := newFixture(t)
	c := f.clientFrom(t, "127.0.0.1")
	bodies := []string{"login=%FF&password=x", "login=a%00b&password=x", "login=%ED%A0%80&password=x",
		"login=ann.admin&shopNo=%FF&password=x", "login=ann.admin&shopNo=SH%00&password=x", "login=%C0%AE%C0%AE&password=x"}
	for _, body := range bodies {
		a, err := f.postRaw(c, "/login", "/login", body)
		if err != nil || a.status != http.StatusBadRequest || !strings.Contains(a.body, "Wrong login, password or code") {
			t.Errorf("%s: %d %v, want 400 with the login page's refusal", body, a.status, err)
		}
	}
	if n := f.count(t, `select count(*) from console_login_attempts where reason = 'bad_login' and login = '' and not ok`); n != len(bodies) {
		t.Errorf("%d attempts recorded, want %d", n, len(bodies))
	}
	// They count toward the address's limit: past it, even a good form is
	// refused before any hash.
	for i := len(bodies); i < console.AddressFailuresDefault; i++ {
		if _, err := f.postRaw(c, "/login", "/login", "login=%FF&password=x"); err != nil {
			t.Fatal(err)
		}
	}
	if a, err := f.post(c, "/login", "/login", f.loginForm(t, "ann.admin", password, "")); err != nil || a.status != http.StatusTooManyRequests {
		t.Errorf("after %d malformed tries: %d %v, want 429", console.AddressFailuresDefault, a.status, err)
	}
}
