package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/console"
)

// A console of the house's users only (HouseOnly: a cell's pages for the
// home cell's operators, docs/scaling.md "The console over cells") serves
// an operator, and takes a merchant's user's session for none: the page
// sends to the login page, whatever the role would allow.
func TestHouseOnlyServesTheHouseOnly(t *testing.T) {
	f := newFixtureWith(t, func(c *console.Config) { c.HouseOnly = true })
	for _, c := range []struct {
		login, path string
		want        int
	}{{"olga.operator", "/operator/merchants", http.StatusOK}, {"aldo.auditor", "/audit/journal", http.StatusOK},
		{"ann.admin", "/balances", http.StatusSeeOther}, {"rita.readonly", "/cards", http.StatusSeeOther}} {
		res, err := f.signedIn(t, c.login).Get(f.url(c.path))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != c.want || (c.want == http.StatusSeeOther && res.Header.Get("Location") != "/login") {
			t.Errorf("%s %s: %d %q, want %d", c.login, c.path, res.StatusCode, res.Header.Get("Location"), c.want)
		}
	}
}

// The moving page and the directory's: 503 with Retry-After, the shared
// error page saying nothing was done; a cell noted down by a domain over
// cells is named above the page.
func TestCellsPages(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		answer func(http.ResponseWriter, *http.Request, time.Duration)
		want   string
	}{{f.console.Moving, "moving between cells"}, {f.console.DirectoryDown, "directory of merchants is unavailable"}} {
		w := httptest.NewRecorder()
		c.answer(w, httptest.NewRequest("GET", "/operator/merchants/SH2000000001", nil), 2*time.Second)
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "2" || !strings.Contains(w.Body.String(), c.want) {
			t.Errorf("%d %q:\n%s", w.Code, w.Header().Get("Retry-After"), w.Body)
		}
	}
	// NoteCellDown outside a console request is ignored (no panic).
	console.NoteCellDown(context.Background(), "b2")
}

// Consoles given one HashSlots share the bound of the hashes at once (over
// cells every cell's console, so that the bound stays the process's): a
// place taken by another console is not this one's to use.
func TestSharedHashSlots(t *testing.T) {
	slots := make(chan struct{}, 1)
	slots <- struct{}{} // another console's hash, running
	f := newFixtureWith(t, func(c *console.Config) { c.HashSlots = slots })
	c := f.clientFrom(t, "127.0.0.1")
	a, err := f.post(c, "/login", "/login", f.loginForm(t, "ann.admin", password, ""))
	if err != nil || a.status != http.StatusServiceUnavailable {
		t.Fatalf("a sign-in while the shared place is taken: %d %v, want 503", a.status, err)
	}
	<-slots
	if a, err = f.post(c, "/login", "/login", f.loginForm(t, "ann.admin", password, "")); err != nil || a.status != http.StatusSeeOther {
		t.Fatalf("a sign-in once it is free: %d %v, want 303", a.status, err)
	}
}
