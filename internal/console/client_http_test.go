package console_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Plain HTTP clients of the fixture's console (no browser): many at once,
// each from its own loopback address (127.0.0.0/8 is all this host's), for
// the tests of bursts and limits.

var csrfFieldRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// clientFrom is a client whose connections come from ip, a loopback
// address, with its own cookies; it follows no redirect, so a sign-in is
// its 303.
func (f *fixture) clientFrom(t *testing.T, ip string) *http.Client {
	t.Helper()
	tr := f.srv.Client().Transport.(*http.Transport).Clone()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 30 * time.Second}
	tr.DialContext = d.DialContext
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: tr, Jar: jar, Timeout: 2 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// answer is a status, its headers and its body.
type answer struct {
	status int
	header http.Header
	body   string
}

// getForm opens path and returns the CSRF token of its form.
func getForm(c *http.Client, base, path string) (string, error) {
	res, err := c.Get(base + path)
	if err != nil {
		return "", err
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := csrfFieldRE.FindStringSubmatch(string(b))
	if m == nil {
		return "", fmt.Errorf("%s: %d, no CSRF field", path, res.StatusCode)
	}
	return m[1], nil
}

// post sends form to path as its page's form would: with the CSRF token
// of the page (formPath) unless form has one. Safe from any goroutine.
func (f *fixture) post(c *http.Client, formPath, path string, form url.Values) (answer, error) {
	if form.Get("csrf") == "" {
		tok, err := getForm(c, f.srv.URL, formPath)
		if err != nil {
			return answer{}, err
		}
		form = cloneValues(form)
		form.Set("csrf", tok)
	}
	res, err := c.Post(f.url(path), "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		return answer{}, err
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return answer{res.StatusCode, res.Header, string(b)}, nil
}

// postRaw sends body as it is (bytes a browser would not send) with the
// CSRF token of formPath's page prepended.
func (f *fixture) postRaw(c *http.Client, formPath, path, body string) (answer, error) {
	tok, err := getForm(c, f.srv.URL, formPath)
	if err != nil {
		return answer{}, err
	}
	res, err := c.Post(f.url(path), "application/x-www-form-urlencoded", strings.NewReader("csrf="+url.QueryEscape(tok)+"&"+body))
	if err != nil {
		return answer{}, err
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return answer{res.StatusCode, res.Header, string(b)}, nil
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// loginForm is the login form of a user: the shop number of its merchant
// (none for the house's), the login, password and code.
func (f *fixture) loginForm(t *testing.T, login, pw, code string) url.Values {
	t.Helper()
	return url.Values{"shopNo": {f.shopOf(t, login)}, "login": {login}, "password": {pw}, "totp": {code}}
}

// signedIn is a client signed in as login (from 127.0.0.1).
func (f *fixture) signedIn(t *testing.T, login string) *http.Client {
	t.Helper()
	c := f.clientFrom(t, "127.0.0.1")
	code := ""
	if f.secrets[login] != "" {
		code = f.code(t, login)
	}
	a, err := f.post(c, "/login", "/login", f.loginForm(t, login, password, code))
	if err != nil || a.status != http.StatusSeeOther {
		t.Fatalf("%s signs in: %d %v", login, a.status, err)
	}
	return c
}

// count is one number the database answers.
func (f *fixture) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := f.g.DB().DB.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
