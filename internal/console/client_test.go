package console_test

import (
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/textproto"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// webUser is a console user over plain HTTP (no browser): a cookie jar, a
// login through the form, and the session's CSRF token read from a page,
// for the tests that send many crafted requests.
type webUser struct {
	f    *fixture
	c    *http.Client
	csrf string
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// newWebUser signs login in; it fails the test unless the login lands on a
// page.
func newWebUser(t *testing.T, f *fixture, login string) *webUser {
	t.Helper()
	u := &webUser{f: f, c: newWebClient(f)}
	status, body := u.tryLogin(t, login, password)
	if status != http.StatusSeeOther {
		t.Fatalf("login %s: %d %s", login, status, body)
	}
	status, body = u.get(t, "/account")
	m := csrfRE.FindStringSubmatch(body)
	if status != 200 || m == nil {
		t.Fatalf("login %s: /account %d", login, status)
	}
	u.csrf = m[1]
	return u
}

// newWebClient is a client of its own (srv.Client is one shared value),
// with its own cookies, that does not follow redirects.
func newWebClient(f *fixture) *http.Client {
	c := *f.srv.Client()
	c.Jar, _ = cookiejar.New(nil)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// tryLogin posts the login form; the status and body of the answer.
func (u *webUser) tryLogin(t *testing.T, login, pw string) (int, string) {
	t.Helper()
	_, page := u.get(t, "/login")
	m := csrfRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no CSRF token on the login page")
	}
	form := url.Values{"csrf": {m[1]}, "login": {login}, "password": {pw}, "shopNo": {u.f.shopOf(t, login)}}
	if code := u.f.secrets[login]; code != "" {
		form.Set("totp", u.f.code(t, login))
	}
	return u.send(t, "POST", "/login", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
}

func (u *webUser) get(t *testing.T, path string) (int, string) {
	t.Helper()
	return u.send(t, "GET", path, "", nil)
}

// post sends a form with the session's CSRF token. Values are written
// as they are given, so a test can put any bytes in them.
func (u *webUser) post(t *testing.T, path string, form url.Values) (int, string) {
	t.Helper()
	v := url.Values{"csrf": {u.csrf}}
	for k, vs := range form {
		v[k] = vs
	}
	return u.send(t, "POST", path, "application/x-www-form-urlencoded", strings.NewReader(v.Encode()))
}

// upload posts a multipart form: fields, and one file under the field
// "file" named name.
func (u *webUser) upload(t *testing.T, path, name, content string, fields map[string]string) (int, string) {
	t.Helper()
	var b strings.Builder
	w := multipart.NewWriter(&b)
	_ = w.WriteField("csrf", u.csrf)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	// The name goes percent-encoded (RFC 2231's filename*), as a client
	// sends bytes a header cannot hold; Go's parser decodes them.
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename*=UTF-8''`+url.PathEscape(name))
	h.Set("Content-Type", "text/csv")
	fw, err := w.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(fw, content)
	_ = w.Close()
	return u.send(t, "POST", path, w.FormDataContentType(), strings.NewReader(b.String()))
}

func (u *webUser) send(t *testing.T, method, path, ctype string, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u.f.url(path), body)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	res, err := u.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
