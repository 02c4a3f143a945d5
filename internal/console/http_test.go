package console_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/console"
	"github.com/paygate/gateway/postings"
)

// What every answer carries and what the server refuses before any page,
// over plain HTTP requests (no browser needed).

func TestSecurityHeadersOnEveryAnswer(t *testing.T) {
	f := newFixture(t)
	c := f.srv.Client()
	for _, path := range []string{"/login", "/balances", "/nope"} {
		res, err := c.Get(f.url(path))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		csp := res.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "form-action 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %s", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") {
			t.Errorf("%s: CSP allows %q", path, csp)
		}
		for h, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"} {
			if got := res.Header.Get(h); got != want {
				t.Errorf("%s: %s %q, want %q", path, h, got, want)
			}
		}
	}
	// The login cookie is host-only, Secure, HttpOnly, SameSite=Strict.
	res, err := c.Get(f.url("/login"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	sc := res.Header.Get("Set-Cookie")
	for _, want := range []string{"__Host-console-login=", "Path=/", "HttpOnly", "Secure", "SameSite=Strict"} {
		if !strings.Contains(sc, want) {
			t.Errorf("login cookie %q lacks %s", sc, want)
		}
	}
	if strings.Contains(string(body), "<script>") || strings.Contains(string(body), "style=") {
		t.Error("the login page has an inline script or style")
	}
}

// A form posted from another site is refused before its token is read.
func TestCrossSiteFormsAreRefused(t *testing.T) {
	f := newFixture(t)
	c := f.srv.Client()
	for name, h := range map[string][2]string{
		"Sec-Fetch-Site cross-site": {"Sec-Fetch-Site", "cross-site"},
		"Sec-Fetch-Site same-site":  {"Sec-Fetch-Site", "same-site"},
		"foreign Origin":            {"Origin", "https://evil.example"},
	} {
		req, _ := http.NewRequest("POST", f.url("/login"), strings.NewReader(url.Values{"login": {"ann.admin"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set(h[0], h[1])
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 403 {
			t.Errorf("%s: %d, want 403", name, res.StatusCode)
		}
	}
}

func TestStaticFilesAreHashedAndCached(t *testing.T) {
	f := newFixture(t)
	c := f.srv.Client()
	res, err := c.Get(f.url("/login"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var urls []string
	for _, part := range strings.Split(string(body), `"`) {
		if strings.HasPrefix(part, "/static/") {
			urls = append(urls, part)
		}
	}
	if len(urls) != 2 {
		t.Fatalf("static URLs in the page: %v", urls)
	}
	for _, u := range urls {
		res, err := c.Get(f.url(u))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Cache-Control"), "immutable") {
			t.Errorf("%s: %d %q", u, res.StatusCode, res.Header.Get("Cache-Control"))
		}
	}
	if res, _ := c.Get(f.url("/static/htmx.min.js")); res.StatusCode != 404 {
		t.Errorf("an unhashed static URL: %d", res.StatusCode)
	}
}

func TestCreateUserRefusals(t *testing.T) {
	f := newFixture(t)
	db := f.g.DB().DB
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		u     console.NewUser
		field string
	}{
		{"login too short", console.NewUser{Login: "ab", Role: console.RoleOperator, Password: password}, "login"},
		{"login with a capital", console.NewUser{Login: "Admin", Role: console.RoleOperator, Password: password}, "login"},
		{"login look-alike", console.NewUser{Login: "аdmin", Role: console.RoleOperator, Password: password}, "login"},
		{"unknown role", console.NewUser{Login: "someone", Role: "root", Password: password}, "role"},
		{"merchant role without merchant", console.NewUser{Login: "someone", Role: console.RoleAdmin, Password: password}, "role"},
		{"house role with merchant", console.NewUser{Login: "someone", Role: console.RoleAuditor, MerchantID: f.a.ID, Password: password}, "role"},
		{"short password", console.NewUser{Login: "someone", Role: console.RoleOperator, Password: "short"}, "password"},
	} {
		_, err := console.CreateUser(ctx, f.g.DB(), f.g.Sealer(), tc.u)
		if e := postings.AsError(err); err == nil || e.Field != tc.field {
			t.Errorf("%s: %v, want a refusal of %s", tc.name, err, tc.field)
		}
	}
	if _, err := console.CreateUser(ctx, f.g.DB(), f.g.Sealer(), console.NewUser{Login: "ann.admin", Role: console.RoleAdmin,
		MerchantID: f.a.ID, Password: password}); postings.ErrorCode(err) != postings.ECONFLICT {
		t.Errorf("a second ann.admin: %v", err)
	}
	// The TOTP secret is sealed, never stored in clear.
	var sealed []byte
	if err := db.QueryRow(`select totp_sealed from console_users where login = 'olga.operator'`).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(sealed), f.secrets["olga.operator"]) {
		t.Error("the TOTP secret is stored in clear")
	}
}
