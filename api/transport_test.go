package api

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/httpserve"
	"github.com/paygate/gateway/internal/merchant"
)

// The transport's limits (docs/security.md, "Time-outs" and "Connections
// per client"), tested with raw bytes over loopback TLS against the server
// as cmd/gateway builds it (newTestServer).
//
// No assertion here is a timing: a test waits at most answerWait for an
// answer, far longer than the short limits it sets and far shorter than
// the request budget (45 s for body and handler). An answer that comes only
// when the budget runs out, or never, fails the test; the message of a 408
// says which deadline cut the body.

// answerWait bounds every wait for the server in these tests.
const answerWait = 30 * time.Second

// rawConn is a client connection written byte by byte.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

// dialRaw opens a TLS connection to s, the handshake done.
func (s *testServer) dialRaw(t *testing.T) *rawConn {
	t.Helper()
	cfg := s.client.Transport.(*http.Transport).TLSClientConfig.Clone()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: answerWait}, "tcp", s.srv.Listener.Addr().String(), cfg)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c, br: bufio.NewReader(c)}
}

func (rc *rawConn) write(s string) {
	rc.t.Helper()
	if _, err := io.WriteString(rc.c, s); err != nil {
		rc.t.Fatalf("write: %v", err)
	}
}

// answer reads one response, waiting at most answerWait.
func (rc *rawConn) answer() (*http.Response, *answer) {
	rc.t.Helper()
	_ = rc.c.SetReadDeadline(time.Now().Add(answerWait))
	resp, err := http.ReadResponse(rc.br, nil)
	if err != nil {
		rc.t.Fatalf("no answer within %v: %v", answerWait, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		rc.t.Fatalf("reading the answer: %v", err)
	}
	a := &answer{status: resp.StatusCode, header: resp.Header, raw: raw}
	if err := json.Unmarshal(raw, a); err != nil {
		rc.t.Fatalf("HTTP %d: the answer is not an envelope: %v: %q", resp.StatusCode, err, raw)
	}
	return resp, a
}

// closedByServer reports whether the server has closed the connection
// (the next read ends, rather than waiting for answerWait).
func (rc *rawConn) closedByServer() bool {
	_ = rc.c.SetReadDeadline(time.Now().Add(answerWait))
	_, err := rc.br.ReadByte()
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// post is a request line and headers for path with a declared body of
// length bytes; headers are "Name: value" lines.
func post(path string, length int, headers ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n", path)
	if length >= 0 {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", length)
	} else {
		b.WriteString("Transfer-Encoding: chunked\r\n")
	}
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

func credentialLines(sh shop) []string {
	return []string{"X-Shop-No: " + sh.creds.ShopNo, "X-Public-Key: " + sh.creds.PublicKey}
}

// A client that sends its headers and a few bytes of a declared body, then
// stalls, is cut by the body's idle deadline — long before the request's
// budget — and still gets an answer in the envelope: a 408 where the
// gateway was reading the body, the route's own answer where it had no use
// for the body (the client got none before: net/http read the rest of the
// body, without a deadline, before writing the answer the gateway had
// logged). Either way the connection is closed after the answer.
func TestStalledBodyIsCutEarly(t *testing.T) {
	t.Parallel()
	const idle = 300 * time.Millisecond
	s := newTestServer(t, serverOptions{limits: Limits{BodyIdleTimeout: idle}})
	sh := s.fundedShop()
	wrong := sh
	wrong.creds = &merchant.Credentials{ShopNo: sh.creds.ShopNo, PublicKey: sh.creds.PublicKey + "x"}
	stalled408 := fmt.Sprintf("body: no data for %v: send the body without pausing", idle)
	tests := []struct {
		name    string
		head    string // request line and headers
		partial string // the part of the body sent before stalling
		status  int
		message string
	}{
		{"authenticated, body read", post("/shop/card/create", 100, credentialLines(sh)...), `{"bin":"45`, 408, stalled408},
		{"authenticated, chunked", post("/shop/card/transfer", -1, credentialLines(sh)...), "a\r\n{\"cardNo\":", 408, stalled408},
		{"authenticated, nothing of the body", post("/shop/card/freeze", 50, credentialLines(sh)...), "", 408, stalled408},
		{"wrong key", post("/shop/card/create", 100, credentialLines(wrong)...), `{"bin":"45`, 401, messageUnauthorized},
		{"no credentials", post("/shop/card/create", 100), `{"bin":"45`, 400, "X-Shop-No: header is required"},
		{"no such route", post("/shop/nothing", 100, credentialLines(sh)...), `{"bin":"45`, 404, "no such endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := s.dialRaw(t)
			rc.write(tt.head + tt.partial)
			resp, a := rc.answer() // the client stalls from here on
			if a.status != tt.status || a.Code != tt.status || a.Message != tt.message || string(a.Data) != "null" {
				t.Fatalf("got HTTP %d %s, want HTTP %d code %d %q", a.status, a.raw, tt.status, tt.status, tt.message)
			}
			if !resp.Close {
				t.Errorf("the answer keeps the connection (Connection: %q): its body is still due", resp.Header.Get("Connection"))
			}
			if !rc.closedByServer() {
				t.Errorf("the server kept the connection of a stalled body")
			}
			id := resp.Header.Get("X-Request-Id")
			if id == "" || !strings.Contains(s.logs.String(), fmt.Sprintf(`"request_id":%q`, id)) {
				t.Errorf("no log line for request %q", id)
			}
			if tt.status == 408 {
				golden(t, "408_body_stalled", a.raw)
			}
		})
	}
	if strings.Contains(s.logs.String(), `"level":"ERROR"`) {
		t.Errorf("a stalled body logged an error:\n%s", s.logs.String())
	}
}

// A body that keeps coming, but too slowly to be complete by the handler's
// deadline, is cut at that deadline with a 408 that says so.
func TestDraggingBodyIsCutAtTheDeadline(t *testing.T) {
	t.Parallel()
	// 5 s for authentication and the body: authentication is done well
	// within it however loaded the machine; the body, at a byte every
	// 50 ms, needs 50 s.
	s := newTestServer(t, serverOptions{timeout: 5 * time.Second, limits: Limits{BodyIdleTimeout: 20 * time.Second}})
	sh := s.fundedShop()
	rc := s.dialRaw(t)
	rc.write(post("/shop/card/create", 1000, credentialLines(sh)...))
	done := make(chan struct{})
	defer close(done)
	go func() { // a byte every 50 ms: never idle, never complete in time
		for i := 0; i < 1000; i++ {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := rc.c.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	resp, a := rc.answer()
	want := "body: not complete within the request's time: send it faster"
	if a.status != 408 || a.Code != 408 || a.Message != want || !resp.Close {
		t.Fatalf("got HTTP %d %s (close %v), want 408 %q and the connection closed", a.status, a.raw, resp.Close, want)
	}
}

// Headers that stall are cut by the header deadline: the connection is
// closed (there is no request to answer yet).
func TestStalledHeadersAreCut(t *testing.T) {
	t.Parallel()
	// The header time-out bounds the TLS handshake too: 3 s leaves a loaded
	// machine time for it.
	s := newTestServer(t, serverOptions{limits: Limits{HeaderTimeout: 3 * time.Second}})
	rc := s.dialRaw(t)
	rc.write("POST /shop/card/create HTTP/1.1\r\nHost: gateway\r\nX-Shop-No: SH1")
	if !rc.closedByServer() {
		t.Fatal("stalled headers held the connection")
	}
}

// A body the handler does not read, but that the client sent whole, keeps
// the connection: net/http drops it (within the idle deadline guardBody
// sets) and the next request goes on the same connection.
func TestUnreadBodyKeepsTheConnection(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{limits: Limits{BodyIdleTimeout: 5 * time.Second}})
	rc := s.dialRaw(t)
	body := `{"bin":"453201","currency":"USD","amount":1}`
	rc.write(post("/shop/card/create", len(body)) + body) // no credentials: 400 before the body is read
	resp, a := rc.answer()
	if a.status != 400 || resp.Close {
		t.Fatalf("got HTTP %d %s (close %v), want 400 and the connection kept", a.status, a.raw, resp.Close)
	}
	rc.write("GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n")
	if _, a := rc.answer(); a.status != 200 {
		t.Fatalf("second request on the connection: HTTP %d %s", a.status, a.raw)
	}
}

// A body that arrives in pieces, each within the idle deadline, is read
// whole: the deadline is per read, not per body.
func TestBodyInPiecesWithinIdle(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{limits: Limits{BodyIdleTimeout: 10 * time.Second}})
	sh := s.fundedShop()
	rc := s.dialRaw(t)
	body := `{"cardNo":"crd_00000000000000000000"}`
	rc.write(post("/shop/card/freeze", len(body), credentialLines(sh)...))
	for _, piece := range []string{body[:5], body[5:20], body[20:]} {
		time.Sleep(20 * time.Millisecond)
		rc.write(piece)
	}
	if _, a := rc.answer(); a.status != 200 || a.Code != codeCardNotFound {
		t.Fatalf("got HTTP %d %s, want 200 code %d", a.status, a.raw, codeCardNotFound)
	}
}

// The internal network API has the same body deadlines: a stalled body is
// a 408 behind the token, and the 401 without it still reaches the client.
func TestInternalStalledBody(t *testing.T) {
	t.Parallel()
	const idle = 300 * time.Millisecond
	s := newTestServer(t, serverOptions{})
	lim := Limits{BodyIdleTimeout: idle}
	h := NewInternalServer(PartnerDeps{Network: s.l.Network, Rails: s.l.Remit, Token: testInternalToken, Limits: lim})
	isrv := httptest.NewUnstartedServer(h)
	isrv.Config = httpserve.NewHTTPServer(h, lim, nil)
	isrv.TLS = httpserve.TLSConfig()
	isrv.StartTLS()
	t.Cleanup(isrv.Close)
	internal := *s
	internal.srv, internal.client = isrv, isrv.Client()
	for _, tt := range []struct {
		auth   []string
		status int
	}{{[]string{"Authorization: Bearer " + testInternalToken}, 408}, {nil, 401}} {
		rc := internal.dialRaw(t)
		rc.write(post("/network/authorize", 200, tt.auth...) + `{"messageId":`)
		resp, a := rc.answer()
		if a.status != tt.status || a.Code != tt.status || !resp.Close || !rc.closedByServer() {
			t.Errorf("token %v: HTTP %d %s (close %v), want %d and the connection closed", tt.auth != nil, a.status, a.raw, resp.Close, tt.status)
		}
	}
}
