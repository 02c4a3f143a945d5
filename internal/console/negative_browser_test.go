package console_test

import (
	"strings"
	"testing"
	"time"
)

// What the console refuses, in the real browser.

// Another merchant's card looks exactly like one that does not exist: the
// same status and the same page, whatever part of its URL is edited.
func TestAnotherMerchantsCardIsUnknown(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t)
	b.login(t, f, "ann.admin", "")
	unknown := "crd_" + strings.Repeat("0", 20)
	var pages []string
	for _, path := range []string{"/cards/" + f.cardB, "/cards/" + unknown, "/cards/" + f.cardB + "/freeze", "/cards/" + unknown + "/freeze"} {
		if got := b.open(t, f.url(path)); got != 404 {
			t.Errorf("%s: status %d, want 404", path, got)
		}
		pages = append(pages, eval[string](t, b, `document.querySelector('main').outerHTML`))
	}
	if pages[0] != pages[1] || pages[2] != pages[3] {
		t.Errorf("another merchant's card and an unknown one differ:\n%s\n%s", pages[0], pages[1])
	}
	b.shot(t, "not-found")
	// A freeze posted for B's card with A's valid token changes nothing.
	b.open(t, f.url("/cards"))
	if got := b.post(t, "/cards/"+f.cardB+"/freeze", map[string]string{"csrf": b.csrf(t)}); got != 404 {
		t.Errorf("freeze of another merchant's card: %d, want 404", got)
	}
	if s := f.cardStatus(t, f.cardB); s != "ACTIVE" {
		t.Errorf("B's card is %s", s)
	}
	// Nor are the house's pages a merchant's.
	if got := b.open(t, f.url("/operator/merchants")); got != 403 {
		t.Errorf("merchant admin on /operator/merchants: %d, want 403", got)
	}
	if got := b.open(t, f.url("/audit/journal?shopNo="+f.b.ShopNo)); got != 403 {
		t.Errorf("merchant admin on the journal: %d, want 403", got)
	}
}

// A read-only user sees the card but cannot freeze it: no button, 403 on
// the confirmation page, 403 on a posted form with a valid token.
func TestReadOnlyUserCannotFreeze(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t)
	b.login(t, f, "rita.readonly", "")
	card := f.cardsA[0]
	if got := b.open(t, f.url("/cards/"+card)); got != 200 {
		t.Fatalf("read-only user on the card: %d", got)
	}
	if n := eval[int](t, b, `document.querySelectorAll('#freeze, #cancel').length`); n != 0 {
		t.Error("a read-only user is shown card actions")
	}
	if got := b.open(t, f.url("/cards/"+card+"/freeze")); got != 403 {
		t.Errorf("confirmation page: %d, want 403", got)
	}
	b.shot(t, "forbidden")
	b.open(t, f.url("/cards/"+card))
	if got := b.post(t, "/cards/"+card+"/freeze", map[string]string{"csrf": b.csrf(t)}); got != 403 {
		t.Errorf("posted freeze: %d, want 403", got)
	}
	if got := b.post(t, "/events/evt_x/replay", map[string]string{"csrf": b.csrf(t)}); got != 403 {
		t.Errorf("posted replay: %d, want 403", got)
	}
	if s := f.cardStatus(t, card); s != "ACTIVE" {
		t.Errorf("card is %s after a read-only user's tries", s)
	}
	if acts := f.auditActions(t); !strings.Contains(strings.Join(acts, " "), "request.refused:refused") {
		t.Errorf("refusals not in the audit trail: %v", acts)
	}
}

// A form without its CSRF token, or with another session's, is refused
// and changes nothing.
func TestFormWithoutCSRFTokenIsRefused(t *testing.T) {
	f := newFixture(t)
	other := newBrowser(t)
	other.login(t, f, "fred.finance", "")
	otherToken := other.csrf(t)

	b := newBrowser(t)
	b.login(t, f, "ann.admin", "")
	card := f.cardsA[0]
	b.open(t, f.url("/cards/"+card))
	for name, form := range map[string]map[string]string{
		"no token":             {"reason": "x"},
		"empty token":          {"csrf": "", "reason": "x"},
		"another session's":    {"csrf": otherToken, "reason": "x"},
		"a token one byte off": {"csrf": oneOff(b.csrf(t)), "reason": "x"},
	} {
		if got := b.post(t, "/cards/"+card+"/freeze", form); got != 403 {
			t.Errorf("%s: %d, want 403", name, got)
		}
	}
	if s := f.cardStatus(t, card); s != "ACTIVE" {
		t.Errorf("card is %s after forms without a valid token", s)
	}
	// The login form has its own token too.
	b2 := newBrowser(t)
	b2.open(t, f.url("/login"))
	if got := b2.post(t, "/login", map[string]string{"login": "ann.admin", "password": password}); got != 403 {
		t.Errorf("login without its token: %d, want 403", got)
	}
	// And the right token works (the test above can fail).
	if got := b.post(t, "/cards/"+card+"/freeze", map[string]string{"csrf": b.csrf(t), "reason": "x"}); got != 303 && got != 0 {
		t.Errorf("with the token: %d, want a redirect", got)
	}
	if s := f.cardStatus(t, card); s != "FROZEN" {
		t.Errorf("card is %s after a form with the token", s)
	}
}

// Wrong passwords lock the user after LockoutFailures tries: then even the
// right password is refused, with the same message, until the lockout ends.
func TestWrongPasswordLocksOut(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t)
	var first string
	for i := 0; i < f.lockFailures; i++ {
		msg := b.tryLogin(t, f, "ann.admin", "wrong password "+string(rune('a'+i)), "")
		if msg == "" {
			t.Fatalf("try %d signed in with a wrong password", i+1)
		}
		if first == "" {
			first = msg
		}
	}
	b.shot(t, "login-refused")
	if msg := b.tryLogin(t, f, "ann.admin", password, ""); msg != first {
		t.Fatalf("the right password after %d failures: %q, want the refusal %q", f.lockFailures, msg, first)
	}
	// An unknown login is refused in the same words.
	if msg := b.tryLogin(t, f, "nobody.here", password, ""); msg != first {
		t.Errorf("unknown login: %q", msg)
	}
	var reasons string
	if err := f.g.DB().DB.QueryRow(`select string_agg(reason, ',' order by id) from console_login_attempts where login = 'ann.admin'`).Scan(&reasons); err != nil {
		t.Fatal(err)
	}
	if reasons != "bad_password,bad_password,bad_password,bad_password,bad_password,locked" {
		t.Errorf("attempts recorded: %s", reasons)
	}
	f.clock.Add(16 * time.Minute) // past the 15-minute lockout
	if msg := b.tryLogin(t, f, "ann.admin", password, ""); msg != "" {
		t.Errorf("after the lockout: %q", msg)
	}
}

// A session ends after 30 minutes without a request, and 12 hours after
// login however busy; the browser is then sent to the login page.
func TestExpiredSessionReturnsToLogin(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t)
	b.login(t, f, "ann.admin", "")
	f.clock.Add(29 * time.Minute)
	if b.open(t, f.url("/balances")); !strings.HasSuffix(b.location(t), "/balances") {
		t.Fatalf("29 idle minutes ended the session: at %s", b.location(t))
	}
	f.clock.Add(31 * time.Minute)
	b.open(t, f.url("/cards"))
	if loc := b.location(t); !strings.HasSuffix(loc, "/login") {
		t.Fatalf("31 idle minutes: at %s, want the login page", loc)
	}

	// Busy all along: a request every 25 minutes, until the absolute end.
	b.login(t, f, "ann.admin", "")
	for elapsed := time.Duration(0); elapsed < 11*time.Hour+30*time.Minute; elapsed += 25 * time.Minute {
		f.clock.Add(25 * time.Minute)
		b.open(t, f.url("/balances"))
		if !strings.HasSuffix(b.location(t), "/balances") {
			t.Fatalf("the session ended after %v of activity", elapsed+25*time.Minute)
		}
	}
	f.clock.Add(25 * time.Minute) // now past 12 hours
	b.open(t, f.url("/balances"))
	if loc := b.location(t); !strings.HasSuffix(loc, "/login") {
		t.Errorf("past 12 hours: at %s, want the login page", loc)
	}
	// An htmx request of an expired session is told where to go.
	hx := eval[string](t, b, `fetch('/balances', {headers: {'HX-Request': 'true'}}).then(r => r.status + ' ' + r.headers.get('HX-Redirect'))`)
	if hx != "401 /login" {
		t.Errorf("htmx request without a session: %q", hx)
	}
}

// oneOff changes the last character of a token to another one.
func oneOff(tok string) string {
	last := byte('A')
	if tok[len(tok)-1] == last {
		last = 'B'
	}
	return tok[:len(tok)-1] + string(last)
}
