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
