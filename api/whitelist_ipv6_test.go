package api

import (
	"log/slog"
	"net"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/httpserve"
	"github.com/paygate/gateway/internal/merchant"
)

// TestAuthIPWhitelistOverIPv6: the whitelist judged from a real IPv6 peer.
// The gateway also listens on [::1] (the same handler behind the same
// listener chain as cmd/gateway's), and each merchant calls it from [::1]
// and from 127.0.0.1: an IPv6 address or CIDR admits the IPv6 peer and not
// the IPv4 one, even where the IPv4 address mapped into IPv6
// (::ffff:127.0.0.1) would fall inside the prefix; an IPv4 entry admits
// only the IPv4 peer. TestAuthIPWhitelist sees IPv6 only as a forwarded
// header; here the TCP peer itself is IPv6 (a "[::1]:port" RemoteAddr).
func TestAuthIPWhitelistOverIPv6(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	v6 := s.listenIPv6(t, nil)
	tests := []struct {
		whitelist     []string
		fromV6, from4 int
	}{
		{[]string{"::1"}, 200, 403},
		{[]string{"::1/128"}, 200, 403},
		{[]string{"2001:db8::/32", "::/64"}, 200, 403}, // ::ffff:127.0.0.1 is inside ::/64 as bits
		{[]string{"2001:db8::/32"}, 403, 403},
		{[]string{"127.0.0.1"}, 403, 200},
		{[]string{"::1", "127.0.0.0/8"}, 200, 200},
		{nil, 200, 200},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.whitelist, ","), func(t *testing.T) {
			sh := s.newShop(merchant.Spec{IPWhitelist: tt.whitelist})
			s.viaURL(v6, func() {
				s.request(&sh, "GET", "/shop/account", "").must(t, tt.fromV6, tt.fromV6)
			})
			s.request(&sh, "GET", "/shop/account", "").must(t, tt.from4, tt.from4)
		})
	}
}

// TestAuthIPWhitelistOverIPv6Proxy: a trusted proxy at ::1 forwards an IPv6
// client, which its whitelist admits; the same header from an untrusted
// IPv6 peer is not believed.
func TestAuthIPWhitelistOverIPv6Proxy(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{proxies: []netip.Prefix{netip.MustParsePrefix("::1/128")}})
	v6 := s.listenIPv6(t, []netip.Prefix{netip.MustParsePrefix("::1/128")})
	sh := s.newShop(merchant.Spec{IPWhitelist: []string{"2001:db8::/32"}})
	s.viaURL(v6, func() {
		s.request(&sh, "GET", "/shop/account", "", "X-Forwarded-For", "2001:db8::7").must(t, 200, 200)
		s.request(&sh, "GET", "/shop/account", "", "X-Forwarded-For", "2001:db9::7").must(t, 403, 403)
	})
	// From 127.0.0.1, not a trusted proxy, the header is the client's own.
	s.request(&sh, "GET", "/shop/account", "", "X-Forwarded-For", "2001:db8::7").must(t, 403, 403)
}

// listenIPv6 serves the test server's handler on [::1]:0 as well, behind
// the listener chain of newTestServer, and returns its URL. A machine
// without IPv6 loopback skips the test.
func (s *testServer) listenIPv6(t *testing.T, proxies []netip.Prefix) string {
	t.Helper()
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	h := s.srv.Config.Handler
	log := slog.New(slog.NewJSONHandler(s.logs, nil))
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close() // the default 127.0.0.1 one
	srv.Config = httpserve.NewHTTPServer(h, Limits{}, log)
	srv.Listener = httpserve.RefusePlainHTTP(httpserve.LimitConnsPerClient(ln, Limits{}.WithDefaults().ConnsPerClientMax, proxies, log), log)
	srv.TLS = httpserve.TLSConfig()
	srv.StartTLS()
	t.Cleanup(srv.Close)
	if !strings.HasPrefix(srv.URL, "https://[::1]:") {
		t.Fatalf("the IPv6 server is at %s", srv.URL)
	}
	return srv.URL
}

// viaURL sends the requests of f to url instead of the test server's
// (request builds its URL from s.srv.URL; f runs on the test's goroutine).
func (s *testServer) viaURL(url string, f func()) {
	old := s.srv.URL
	s.srv.URL = url
	defer func() { s.srv.URL = old }()
	f()
}
