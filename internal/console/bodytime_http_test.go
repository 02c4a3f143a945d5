package console_test

import (
	"bufio"
	"crypto/tls"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/httplimits"
	"github.com/paygate/gateway/internal/httpserve"
)

// A stalled body is answered 408 by the API's deadlines, which serve puts
// in front of the console (httpserve.GuardBodyHandler), not held for the
// server's whole read time and then taken for a form without its CSRF
// token (issue 27, 8d).
func TestStalledFormIs408(t *testing.T) {
	f := newFixtureWith(t, nil, func(h http.Handler) http.Handler {
		return httpserve.GuardBodyHandler(h, httplimits.Limits{BodyIdleTimeout: 300 * time.Millisecond})
	})
	session := f.signedIn(t, "ann.admin")
	var cookie string
	for _, c := range session.Jar.Cookies(mustURL(t, f.url("/"))) {
		cookie += c.Name + "=" + c.Value + "; "
	}
	for _, tc := range []struct{ path, cookie string }{
		{"/login", ""},                // no session: the login form
		{"/account/password", cookie}, // a session's form (guard)
		{"/users", cookie},            // a step-up form
	} {
		conn, err := tls.Dial("tcp", f.srv.Listener.Addr().String(), &tls.Config{InsecureSkipVerify: true}) // #nosec G402 -- the test server's own certificate
		if err != nil {
			t.Fatal(err)
		}
		// Headers and 10 bytes of a 100-byte body, then nothing.
		_, err = conn.Write([]byte("POST " + tc.path + " HTTP/1.1\r\nHost: " + f.srv.Listener.Addr().String() +
			"\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\nCookie: " + tc.cookie + "\r\n\r\ncsrf=abcde"))
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // far above the 300 ms pause allowed
		line, err := bufio.NewReader(conn).ReadString('\n')
		conn.Close()
		if err != nil || !strings.HasPrefix(line, "HTTP/1.1 408") {
			t.Errorf("%s with a stalled body: %q %v, want 408", tc.path, line, err)
		}
	}
}
