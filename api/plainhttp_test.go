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

// How the first bytes decide; anything that is not an HTTP method and its
// space goes to TLS untouched (which refuses it if it is not TLS).
func TestSniffFirstBytes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want sniffResult
	}{
		{"", sniffUndecided},
		{"\x16\x03\x01\x02\x00", sniffOther},
		{"\x16", sniffOther},
		{"G", sniffUndecided},
		{"GET", sniffUndecided},
		{"GET ", sniffPlainHTTP},
		{"POST /", sniffPlainHTTP},
		{"OPTIONS ", sniffPlainHTTP},
		{"CONNECT ", sniffPlainHTTP},
		{"PRI * HTTP/2.0", sniffPlainHTTP},
		{"GE ", sniffOther},
		{"get /", sniffOther},
		{"ABCDEFGH", sniffOther},
		{"\x80\x2e\x01", sniffOther}, // an SSLv2-style hello
		{"SSH-2.0", sniffOther},
		{"\r\nGET ", sniffOther},
	}
	for _, tt := range tests {
		if got := sniffFirstBytes([]byte(tt.in)); got != tt.want {
			t.Errorf("%q: %d, want %d", tt.in, got, tt.want)
		}
	}
}

// sniffFirstBytes never mistakes a TLS record for HTTP and never asks for
// more than plainHTTPSniffBytesMax bytes.
func FuzzSniffFirstBytes(f *testing.F) {
	for _, s := range []string{"GET /", "\x16\x03\x01", "OPTIONS *", "ABCDEFGHIJ", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := sniffFirstBytes(b)
		if len(b) > 0 && b[0] == tlsRecordTypeHandshake && got != sniffOther {
			t.Fatalf("%q: a TLS record taken for %d", b, got)
		}
		if len(b) >= plainHTTPSniffBytesMax && got == sniffUndecided {
			t.Fatalf("%q: undecided after %d bytes", b, len(b))
		}
		if got == sniffPlainHTTP && !strings.Contains(string(b), " ") {
			t.Fatalf("%q: plain HTTP without a space", b)
		}
	})
}
