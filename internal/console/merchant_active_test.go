package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/merchant"
)

// A disabled merchant keeps nothing in the console (docs/security.md,
// "Disabled merchants"): its users' sessions end at their next request,
// whatever the page or action, and they cannot sign in again — refused as
// a wrong password is, with the same page; nothing they send changes
// anything. Another merchant and the house go on. Enabled again, the
// users sign in anew (their old sessions stay ended).
func TestDisabledMerchantKeepsNoConsole(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ann := newWebUser(t, f, "ann.admin")
	fred := newWebUser(t, f, "fred.finance")
	bob := newWebUser(t, f, "bob.admin")
	if err := f.g.SetMerchantStatus(ctx, f.a.ID, merchant.Disabled); err != nil { // the CLI's merchant disable
		t.Fatal(err)
	}
	funding := func() (n int64) {
		if err := f.g.DB().DB.QueryRow(`select count(*) from entries where merchant_id = $1`, f.a.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before, users, audit := funding(), f.countRows(t, "console_users"), len(f.auditActions(t))
	for _, tc := range []struct {
		who          *webUser
		method, path string
		form         url.Values
	}{
		{ann, "POST", "/cards/" + f.cardsA[0] + "/cancel", nil},
		{ann, "POST", "/users", url.Values{"login": {"mallory"}, "role": {"admin"}}},
		{ann, "GET", "/balances", nil},
		{fred, "POST", "/events/evt_x/replay", nil},
		{fred, "GET", "/bill.csv", nil},
	} {
		var status int
		var body string
		if tc.method == "GET" {
			status, body = tc.who.get(t, tc.path)
		} else {
			status, body = tc.who.post(t, tc.path, tc.form)
		}
		if status != http.StatusSeeOther || strings.Contains(body, "Acme") {
			t.Errorf("%s %s of a disabled merchant's user: %d, want 303 to /login", tc.method, tc.path, status)
		}
	}
	if s := f.cardStatus(t, f.cardsA[0]); s != "ACTIVE" || funding() != before || f.countRows(t, "console_users") != users {
		t.Errorf("a disabled merchant's user changed something: card %s, journal entries %d→%d, users %d→%d", s, before, funding(), users, f.countRows(t, "console_users"))
	}
	if n := len(f.auditActions(t)); n != audit {
		t.Errorf("%d audit rows written for requests without a session", n-audit)
	}
	if n := f.sessionsOf(t, f.a.ID); n != 0 {
		t.Errorf("%d sessions of the disabled merchant's users are left", n)
	}
	// Signing in: the right password gets what a wrong one gets.
	fresh := &webUser{f: f, c: newWebClient(f)}
	okStatus, okBody := fresh.tryLogin(t, "ann.admin", password)
	badStatus, badBody := fresh.tryLogin(t, "ann.admin", "wrong password!!")
	if okStatus != http.StatusUnauthorized || okStatus != badStatus || csrfRE.ReplaceAllString(okBody, "") != csrfRE.ReplaceAllString(badBody, "") {
		t.Errorf("login of a disabled merchant's user: %d, a wrong password %d; pages equal: %v", okStatus, badStatus,
			csrfRE.ReplaceAllString(okBody, "") == csrfRE.ReplaceAllString(badBody, ""))
	}
	// Merchant B and the house are not touched.
	if status, _ := bob.get(t, "/balances"); status != 200 {
		t.Errorf("another merchant's admin: %d", status)
	}
	olga := newWebUser(t, f, "olga.operator")
	if status, _ := olga.get(t, "/operator/merchants/"+f.a.ShopNo); status != 200 {
		t.Errorf("the operator's page of the disabled merchant: %d", status)
	}
	// Enabled again: a new login works; the old session stays ended.
	if err := f.g.SetMerchantStatus(ctx, f.a.ID, merchant.Active); err != nil {
		t.Fatal(err)
	}
	if status, _ := fred.get(t, "/balances"); status != http.StatusSeeOther {
		t.Errorf("an ended session came back with the merchant: %d", status)
	}
	newWebUser(t, f, "ann.admin")
}

// The operator's Disable button ends the merchant's sessions at once.
func TestConsoleDisableEndsSessionsAtOnce(t *testing.T) {
	f := newFixture(t)
	newWebUser(t, f, "ann.admin")
	olga := newWebUser(t, f, "olga.operator")
	if n := f.sessionsOf(t, f.a.ID); n != 1 {
		t.Fatalf("%d sessions before", n)
	}
	if status, _ := olga.post(t, "/operator/merchants/"+f.a.ShopNo+"/disable", nil); status != http.StatusSeeOther {
		t.Fatalf("disable: %d", status)
	}
	if n := f.sessionsOf(t, f.a.ID); n != 0 {
		t.Errorf("%d sessions of the disabled merchant's users are left", n)
	}
}

func (f *fixture) countRows(t *testing.T, table string) (n int) {
	t.Helper()
	if err := f.g.DB().DB.QueryRow(`select count(*) from ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// sessionsOf counts the console sessions of a merchant's users.
func (f *fixture) sessionsOf(t *testing.T, merchant int64) (n int) {
	t.Helper()
	if err := f.g.DB().DB.QueryRow(`select count(*) from console_sessions s join console_users u on u.id = s.user_id
		where u.merchant_id = $1`, merchant).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
