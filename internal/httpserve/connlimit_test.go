package httpserve

import (
	"net"
	"net/netip"
	"testing"
	"time"
)

// answerWait bounds a wait for the other end of a connection: generous, so
// that a loaded machine is not a failure.
const answerWait = 30 * time.Second

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
