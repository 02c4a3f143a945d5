package api

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// One client address holds at most ConnsPerClientMax connections: one more
// is closed before its handshake, authenticated or not, while the ones it
// holds go on serving; a closed one frees its place; another address and a
// trusted proxy are not held back.
func TestConnsPerClientBound(t *testing.T) {
	// Not parallel: it holds connections up to the per-client bound; it runs alone, before the parallel tests,
	// so that it tests the server and not the machine.
	const max = 3
	s := newTestServer(t, serverOptions{limits: Limits{ConnsPerClientMax: max}})
	held := make([]*rawConn, max)
	for i := range held {
		held[i] = s.dialRaw(t)
	}
	if err := s.tryDial("127.0.0.1"); err == nil {
		t.Fatalf("connection %d from 127.0.0.1 accepted, want it refused", max+1)
	}
	for i, rc := range held {
		rc.write("GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n")
		if _, a := rc.answer(); a.status != 200 {
			t.Fatalf("held connection %d: HTTP %d %s", i, a.status, a.raw)
		}
	}
	// Another address of the loopback network is another client.
	switch err := s.tryDial("127.0.0.2"); {
	case err != nil && strings.Contains(err.Error(), "bind"):
		t.Logf("127.0.0.2 is not usable as a source address here: %v", err)
	case err != nil:
		t.Errorf("127.0.0.2, another client, refused: %v", err)
	}
	// Closing one frees its place, once the server has seen the close.
	held[0].c.Close()
	deadline := time.Now().Add(answerWait)
	for s.tryDial("127.0.0.1") != nil {
		if time.Now().After(deadline) {
			t.Fatalf("no place freed %v after a connection closed", answerWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The refusals were logged, without a key or a body.
	if !strings.Contains(s.logs.String(), "connections refused: too many open from one client") {
		t.Errorf("no log line for the refused connection:\n%s", s.logs.String())
	}
}

// tryDial opens one TLS connection to s from the local address from and
// sends a request on it; it returns an error if the connection is refused
// at any step. The connection is closed before returning.
func (s *testServer) tryDial(from string) error {
	cfg := s.client.Transport.(*http.Transport).TLSClientConfig.Clone()
	d := &net.Dialer{Timeout: answerWait, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := tls.DialWithDialer(d, "tcp", s.srv.Listener.Addr().String(), cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(answerWait))
	if _, err := c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n")); err != nil {
		return err
	}
	b := make([]byte, 12)
	if _, err := c.Read(b); err != nil {
		return err
	}
	return nil
}

// Connections from a trusted proxy are not counted: the proxy carries many
// clients and bounds them itself.
func TestConnsPerClientSparesTrustedProxies(t *testing.T) {
	t.Parallel()
	const max = 2
	s := newTestServer(t, serverOptions{limits: Limits{ConnsPerClientMax: max},
		proxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	for i := 0; i < 2*max; i++ {
		s.dialRaw(t) // each stays open until the test ends
	}
	if err := s.tryDial("127.0.0.1"); err != nil {
		t.Fatalf("connection %d from a trusted proxy: %v", 2*max+1, err)
	}
}

// The key a peer counts under: an IPv4 address, an IPv6 /64 (a host picks
// addresses from a whole /64), IPv4-mapped IPv6 as IPv4.
func TestClientPrefix(t *testing.T) {
	t.Parallel()
	tests := []struct{ addr, want string }{
		{"192.0.2.7", "192.0.2.7/32"},
		{"::ffff:192.0.2.7", "192.0.2.7/32"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
		{"::1", "::/64"},
	}
	l := &clientConnLimiter{}
	for _, tt := range tests {
		ap := netip.AddrPortFrom(netip.MustParseAddr(tt.addr), 443)
		got, ok := l.clientKey(net.TCPAddrFromAddrPort(ap))
		if !ok || got.String() != tt.want {
			t.Errorf("%s: key %v (%v), want %s", tt.addr, got, ok, tt.want)
		}
	}
	// Trusted proxies and addresses that are not TCP are not counted.
	l.proxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	if _, ok := l.clientKey(net.TCPAddrFromAddrPort(netip.MustParseAddrPort("10.1.2.3:443"))); ok {
		t.Error("a trusted proxy is counted")
	}
	if _, ok := l.clientKey(&net.UnixAddr{Name: "/tmp/x", Net: "unix"}); ok {
		t.Error("a unix socket peer is counted")
	}
}

// The count of a client goes up with each connection accepted and down
// with each closed, once however often it is closed, and the map forgets a
// client without connections.
func TestConnsPerClientCounting(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lim := LimitConnsPerClient(ln, 2, nil, nil).(*clientConnLimiter)
	defer lim.Close()
	key := netip.MustParsePrefix("127.0.0.1/32")
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := lim.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	a, b := <-accepted, <-accepted
	if n := lim.openConns(key); n != 2 {
		t.Fatalf("%d counted, want 2", n)
	}
	// The third is reset by the limiter: its client fails to connect, or
	// reads the end, depending on when the reset arrives.
	if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(answerWait))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Error("the third connection is open")
		}
	}
	if n := lim.openConns(key); n != 2 {
		t.Fatalf("%d counted after a refusal, want 2", n)
	}
	a.Close()
	a.Close()
	if n := lim.openConns(key); n != 1 {
		t.Fatalf("%d counted after one close (twice), want 1", n)
	}
	b.Close()
	lim.mu.Lock()
	n := len(lim.open)
	lim.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d clients in the map with no connection", n)
	}
}
