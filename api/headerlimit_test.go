package api

import (
	"fmt"
	"strings"
	"testing"
)

// Headers larger than HeaderBytesMax get a 431 in the envelope, counted as
// a client sends them: exactly at the bound passes, one byte more is
// refused. Far above it (but below net/http's backstop) is the same 431.
func TestHeadersTooLarge(t *testing.T) {
	t.Parallel()
	const max = 8 << 10
	s := newTestServer(t, serverOptions{limits: Limits{HeaderBytesMax: max}})
	sh := s.fundedShop()
	// request is GET /shop/account with a padding header that makes the
	// request line and headers n bytes long.
	request := func(n int) string {
		head := "GET /shop/account HTTP/1.1\r\nHost: gateway\r\n" +
			"X-Shop-No: " + sh.creds.ShopNo + "\r\nX-Public-Key: " + sh.creds.PublicKey + "\r\n"
		pad := n - len(head) - len("X-Pad: \r\n") - len("\r\n")
		return head + "X-Pad: " + strings.Repeat("p", pad) + "\r\n\r\n"
	}
	for _, tt := range []struct {
		size   int
		status int
	}{{max, 200}, {max + 1, 431}, {512 << 10, 431}} {
		t.Run(fmt.Sprint(tt.size), func(t *testing.T) {
			rc := s.dialRaw(t)
			req := request(tt.size)
			if len(req) != tt.size {
				t.Fatalf("the request is %d bytes, want %d", len(req), tt.size)
			}
			rc.write(req)
			_, a := rc.answer()
			if a.status != tt.status || (tt.status == 200 && a.Code != codeOK) ||
				(tt.status != 200 && a.Code != tt.status) {
				t.Fatalf("%d bytes of headers: HTTP %d %s, want %d", tt.size, a.status, a.raw, tt.status)
			}
			if tt.status == 431 {
				golden(t, "431_headers_too_large", a.raw)
			}
		})
	}
}
