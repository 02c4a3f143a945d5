package console_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/console"
)

// TestEveryStateChangingRouteChecksCSRF walks every route the console
// registered (console.RoutePatterns: a route added later is in the walk
// without an edit here) and sends each one that is not GET or HEAD, as
// every fixture user in turn — so as each role allowed to use it, and as
// the others — without the CSRF token and with a forged one. Each answer
// must be the CSRF refusal itself (403 and its sentence, not a role
// refusal, a 404 or a redirect), and the database must be as it was: one
// route whose handler skipped the check would act for the allowed roles
// and answer otherwise.
//
// Plain HTTP with a cookie jar, not the browser: the check is the
// server's, and 300 requests through Chromium would take minutes.
func TestEveryStateChangingRouteChecksCSRF(t *testing.T) {
	f := newFixture(t)
	// A card.frozen event, which goes to A's URL: one its users may replay.
	if _, err := f.g.Cards.FreezeCard(context.Background(), f.a.ID, f.cardsA[1], "csrf test", nil); err != nil {
		t.Fatal(err)
	}
	var evA string
	if err := f.g.DB().DB.QueryRow(`select event_id from events where merchant_id = $1 and event_type = 'card.frozen'`, f.a.ID).Scan(&evA); err != nil {
		t.Fatalf("an event of A: %v", err)
	}
	financeID, _, _, _, _ := f.consoleUser(t, "fred.finance")
	auditorID, _, _, _, _ := f.consoleUser(t, "aldo.auditor")
	// What each wildcard stands for: values the allowed role could act on,
	// so that a missing check shows as an action, not as a 404.
	wild := map[string]string{
		"{cardNo}":  f.cardsA[0],
		"{eventID}": evA,
		"{shopNo}":  f.a.ShopNo,
		"{seq}":     "1",
	}
	// {id} and {action} depend on the route.
	perRoute := map[string]map[string]string{
		"/cards/":             {"{action}": "freeze"},
		"/users/":             {"{id}": strconv.FormatInt(financeID, 10), "{action}": "disable"},
		"/house/users/":       {"{id}": strconv.FormatInt(auditorID, 10), "{action}": "disable"},
		"/operator/merchants": {"{action}": "disable"},
		"/house/adjustments/": {"{id}": "1", "{decision}": "reject"},
	}

	logins := []string{"ann.admin", "fred.finance", "rita.readonly", "bob.admin", "olga.operator", "aldo.auditor"}
	clients := map[string]*http.Client{}
	for _, login := range logins {
		clients[login] = f.httpLogin(t, login)
	}

	h, ok := f.srv.Config.Handler.(*console.Server)
	if !ok {
		t.Fatalf("the fixture serves %T, not the console", f.srv.Config.Handler)
	}
	walked := 0
	for _, pattern := range console.RoutePatterns(h) {
		method, path, hasMethod := strings.Cut(pattern, " ")
		if !hasMethod {
			method, path = http.MethodPost, pattern // a method-less pattern takes POST too
		}
		if method == http.MethodGet || method == http.MethodHead {
			continue
		}
		walked++
		target := fillPattern(t, path, wild, perRoute)
		t.Run(method+" "+path, func(t *testing.T) {
			before := f.snapshot(t)
			for _, login := range logins {
				for name, token := range map[string]string{"no token": "", "a forged token": strings.Repeat("A", 43)} {
					form := url.Values{"reason": {"csrf test"}}
					if token != "" {
						form.Set("csrf", token)
					}
					req, err := http.NewRequest(method, f.url(target), strings.NewReader(form.Encode()))
					if err != nil {
						t.Fatal(err)
					}
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
					status, body := send(t, clients[login], req)
					if path == "/" {
						// The catch-all is the not-found page: no handler, no change.
						if status != http.StatusNotFound {
							t.Errorf("%s, %s: %d, want the 404 page", login, name, status)
						}
						continue
					}
					if status != http.StatusForbidden || !strings.Contains(body, "no valid CSRF token") {
						t.Errorf("%s %s as %s, %s: %d %q, want the CSRF refusal", method, target, login, name, status, firstLine(body))
					}
				}
			}
			if after := f.snapshot(t); after != before {
				t.Errorf("%s %s without a valid token changed the database:\n%s", method, target, diffLines(before, after))
			}
		})
	}
	// The walk saw the routes (a registration that bypassed the recorder
	// would leave it short).
	if walked < 25 {
		t.Errorf("only %d state-changing routes walked", walked)
	}
}

// fillPattern puts values for a pattern's wildcards; an unknown wildcard
// fails, so that a new route gets a value rather than a silent 404.
func fillPattern(t *testing.T, path string, wild map[string]string, perRoute map[string]map[string]string) string {
	t.Helper()
	out := path
	for prefix, vals := range perRoute {
		if strings.HasPrefix(path, prefix) {
			for k, v := range vals {
				out = strings.ReplaceAll(out, k, v)
			}
		}
	}
	for k, v := range wild {
		out = strings.ReplaceAll(out, k, v)
	}
	out = strings.ReplaceAll(out, "{$}", "")
	if strings.Contains(out, "{") {
		t.Fatalf("route %s: no value for a wildcard in %s (add it to the test's table)", path, out)
	}
	return out
}

var csrfInputRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// httpLogin signs login in through the form, over plain HTTP with a
// cookie jar, and returns the client holding the session. Redirects are
// not followed, so that a test sees the answer itself.
func (f *fixture) httpLogin(t *testing.T, login string) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := *f.srv.Client()
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, _ := http.NewRequest(http.MethodGet, f.url("/login"), nil)
	_, page := send(t, &c, req)
	m := csrfInputRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the login page has no CSRF token: %s", page)
	}
	form := url.Values{"csrf": {m[1]}, "login": {login}, "password": {password}, "shopNo": {f.shopOf(t, login)}}
	if login == "olga.operator" || login == "aldo.auditor" {
		form.Set("totp", f.code(t, login))
	}
	req, _ = http.NewRequest(http.MethodPost, f.url("/login"), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if status, body := send(t, &c, req); status != http.StatusSeeOther {
		t.Fatalf("login %s: %d %s", login, status, firstLine(body))
	}
	return &c
}

func send(t *testing.T, c *http.Client, req *http.Request) (int, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// snapshot is a digest of every table of the database, one line each; of
// the sessions only which exist (a request moves its session's
// last_seen_at, which is no change of state).
func (f *fixture) snapshot(t *testing.T) string {
	t.Helper()
	db := f.g.DB().DB
	rows, err := db.Query(`select tablename from pg_tables where schemaname = current_schema() order by tablename`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	var sb strings.Builder
	for _, tbl := range tables {
		q := `select md5(coalesce(string_agg(x::text, '|' order by x::text), '')) from ` + pgIdent(tbl) + ` x`
		if tbl == "console_sessions" {
			q = `select md5(coalesce(string_agg(encode(token_sha256, 'hex'), '|' order by token_sha256), '')) from console_sessions`
		}
		var sum string
		if err := db.QueryRow(q).Scan(&sum); err != nil {
			t.Fatalf("%s: %v", tbl, err)
		}
		sb.WriteString(tbl + " " + sum + "\n")
	}
	return sb.String()
}

// pgIdent quotes a table name read from the catalogue (it cannot be a bind
// parameter).
func pgIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := range al {
		if i < len(bl) && al[i] != bl[i] {
			out = append(out, al[i]+" → "+bl[i])
		}
	}
	return strings.Join(out, "\n")
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}
