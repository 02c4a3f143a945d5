package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Every field of every console form, and every query parameter of its
// pages, goes through the API's text rules at the door (formtext.go): bytes
// that are not UTF-8, NUL, an encoded surrogate, a bidirectional override,
// a tag character and a value past its bound are each a 400 naming the
// field, never a 500, and change nothing.
func TestEveryConsoleFieldRefusesMalformedText(t *testing.T) {
	f := newFixture(t)
	ann := newWebUser(t, f, "ann.admin")
	olga := newWebUser(t, f, "olga.operator")
	aldo := newWebUser(t, f, "aldo.auditor")
	shop, card := "/operator/merchants/"+f.a.ShopNo, f.cardsA[0]
	forms := []struct {
		who    *webUser
		method string
		path   string
		fields []string
	}{
		{ann, "POST", "/cards/" + card + "/freeze", []string{"reason"}},
		{ann, "POST", "/users", []string{"login", "role"}},
		{ann, "GET", "/cards", []string{"q", "status"}},
		{ann, "GET", "/bill", []string{"startDate", "endDate", "page", "size"}},
		{ann, "GET", "/events", []string{"status", "order"}},
		{ann, "GET", "/remittances", []string{"status", "before"}},
		{ann, "GET", "/statement", []string{"startDate", "endDate"}},
		{ann, "GET", "/reports/balance", []string{"startDate", "endDate", "timeZone", "currency"}},
		{ann, "GET", "/reports/balance.csv", []string{"startDate", "endDate", "timeZone", "currency"}},
		{olga, "POST", "/operator/merchants", []string{"name", "currencies"}},
		{olga, "POST", "/operator/rates", []string{"pair", "rate", "spreadBps"}},
		{olga, "POST", shop + "/whitelist", []string{"ipWhitelist"}},
		{olga, "POST", shop + "/kyb", []string{"tier"}},
		{olga, "POST", shop + "/limits", []string{"currency", "cardBalanceMax", "dailyCardIssueMax"}},
		{olga, "POST", shop + "/bins", []string{"bin", "currency", "mode"}},
		{olga, "POST", shop + "/callback-url", []string{"callbackUrl"}},
		{olga, "POST", shop + "/deposit", []string{"currency", "amount"}},
		{olga, "POST", shop + "/deposit/confirm", []string{"currency", "amount", "idempotencyKey"}},
		{olga, "POST", shop + "/roll-key", []string{"key", "overlapHours", "idempotencyKey"}},
		{olga, "POST", "/operator/bins", []string{"bin", "currency", "network", "enabled"}},
		{olga, "POST", "/house/users", []string{"login", "role"}},
		{olga, "POST", "/operator/sanctions/confirm", []string{"idempotencyKey"}},
		{olga, "GET", "/operator/holds", []string{"within", "afterAt", "afterId"}},
		{olga, "GET", "/operator/merchants", []string{"page"}},
		{olga, "POST", "/account/password", []string{"currentPassword", "newPassword", "confirmPassword", "totp"}},
		{aldo, "POST", "/audit/verify", []string{"shopNo"}},
		{aldo, "GET", "/audit/journal", []string{"shopNo", "from"}},
		{aldo, "GET", "/audit/statement", []string{"shopNo", "startDate", "endDate"}},
		{aldo, "GET", "/audit/trail", []string{"before"}},
		{aldo, "GET", "/audit/checkpoints", []string{"before"}},
		{aldo, "GET", "/closes", []string{"shopNo", "before"}},
		{aldo, "GET", "/house/adjustments", []string{"shopNo"}},
		{olga, "POST", "/house/adjustments", []string{"shopNo", "mode", "reverses", "houseAccount", "direction", "amount", "currency", "reason", "reference"}},
	}
	bad := map[string]string{
		"invalid UTF-8": "ab\xffcd",
		"NUL":           "a\x00b",
		"surrogate":     "\xed\xa0\x80",
		"bidi override": "ab\u202ecd",
		"tag character": "ab\U000E0041cd",
		"over-long":     strings.Repeat("a", 5000),
	}
	for _, form := range forms {
		for _, field := range form.fields {
			for what, v := range bad {
				if strings.HasSuffix(field, "Password") {
					// Passwords are secrets, never shown: any character
					// CheckPasswordRules allows, but only as UTF-8 and
					// within their bound.
					if what == "bidi override" || what == "tag character" {
						continue
					}
					if what == "over-long" {
						v = strings.Repeat("a", 1025)
					}
				}
				var status int
				var body string
				if form.method == "GET" {
					status, body = form.who.get(t, form.path+"?"+url.Values{field: {v}}.Encode())
				} else {
					status, body = form.who.post(t, form.path, url.Values{field: {v}})
				}
				named := strings.Contains(body, field+":") || field == "ipWhitelist" && strings.Contains(body, "ip_whitelist:")
				if status != http.StatusBadRequest || !named {
					t.Errorf("%s %s %s %s: %d, want 400 naming the field", form.method, form.path, field, what, status)
				}
			}
		}
	}
	if s := f.cardStatus(t, card); s != "ACTIVE" {
		t.Errorf("the card is %s", s)
	}
	if n := f.countRows(t, "console_users"); n != 6 {
		t.Errorf("%d console users", n)
	}
}

// Malformed path segments name nothing: a 404 (or the page's 400), never
// a 500.
func TestMalformedPathSegmentsAreNotFound(t *testing.T) {
	f := newFixture(t)
	ann := newWebUser(t, f, "ann.admin")
	olga := newWebUser(t, f, "olga.operator")
	aldo := newWebUser(t, f, "aldo.auditor")
	for _, seg := range []string{"%FF", "%00", "%ED%A0%80", "%E2%80%AE"} {
		for _, tc := range []struct {
			who          *webUser
			method, path string
		}{
			{ann, "GET", "/cards/" + seg},
			{ann, "GET", "/events/" + seg},
			{ann, "POST", "/events/" + seg + "/replay"},
			{ann, "GET", "/remittances/" + seg},
			{ann, "POST", "/users/" + seg + "/disable"},
			{olga, "GET", "/operator/merchants/" + seg},
			{olga, "POST", "/operator/merchants/" + seg + "/disable"},
			{olga, "POST", "/house/users/" + seg + "/disable"},
			{aldo, "GET", "/audit/journal/" + seg + "/1"},
			{aldo, "GET", "/audit/verify/" + seg},
		} {
			var status int
			if tc.method == "GET" {
				status, _ = tc.who.get(t, tc.path)
			} else {
				status, _ = tc.who.post(t, tc.path, nil)
			}
			if status != http.StatusNotFound && status != http.StatusBadRequest {
				t.Errorf("%s %s: %d, want 404", tc.method, tc.path, status)
			}
		}
	}
}
