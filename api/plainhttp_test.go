package api

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Plain HTTP on the HTTPS port gets a 400 in the envelope, in plain HTTP,
// with a request id, and the connection closed; net/http's own answer is
// plain text. TLS clients are not disturbed (every other test of the
// package goes through the same listener).
func TestPlainHTTPOnTheTLSPort(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.fundedShop()
	body := `{"bin":"453201","currency":"USD","amount":1}`
	requests := map[string]string{
		"GET":                   "GET /shop/account HTTP/1.1\r\nHost: gateway\r\nX-Shop-No: " + sh.creds.ShopNo + "\r\nX-Public-Key: " + sh.creds.PublicKey + "\r\n\r\n",
		"POST with a body":      post("/shop/card/create", len(body), credentialLines(sh)...) + body,
		"HTTP/1.0":              "GET /healthz HTTP/1.0\r\n\r\n",
		"OPTIONS":               "OPTIONS * HTTP/1.1\r\nHost: gateway\r\n\r\n",
		"sent a byte at a time": "DELETE /shop/card/info HTTP/1.1\r\nHost: gateway\r\n\r\n",
	}
	for name, req := range requests {
		t.Run(name, func(t *testing.T) {
			c, err := net.DialTimeout("tcp", s.srv.Listener.Addr().String(), answerWait)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(answerWait))
			if name == "sent a byte at a time" {
				for i := 0; i < len(req); i++ {
					if _, err := c.Write([]byte{req[i]}); err != nil {
						break // answered and closed before the end: allowed
					}
				}
			} else if _, err := io.WriteString(c, req); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no HTTP answer: %v", err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var env map[string]json.RawMessage
			if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" ||
				json.Unmarshal(raw, &env) != nil || len(env) != 3 || string(env["data"]) != "null" {
				t.Fatalf("HTTP %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
			}
			if id := resp.Header.Get("X-Request-Id"); !strings.HasPrefix(id, "req_") ||
				!strings.Contains(s.logs.String(), `"request_id":"`+id+`"`) {
				t.Errorf("request id %q not made or not logged", id)
			}
			if !resp.Close {
				t.Error("the answer does not close the connection")
			}
			if _, err := br.ReadByte(); err == nil {
				t.Error("the connection is still open after the answer")
			}
			golden(t, "400_plain_http", raw)
		})
	}
}
