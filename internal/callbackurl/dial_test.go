package callbackurl

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// loopbackListener accepts and closes connections on 127.0.0.1, counting
// them.
func loopbackListener(t *testing.T) (netip.AddrPort, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String()), &accepted
}

// waitAccepted waits until the listener has counted n connections: a dial
// returns once the kernel completed the handshake, before the accept loop
// counts it, so a count read right after an allowed dial may still miss it
// and blame the next, refused, dial for it (seen on a loaded machine).
func waitAccepted(t *testing.T, accepted *atomic.Int32, n int32) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); accepted.Load() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the listener counted %d connections, want %d", accepted.Load(), n)
		}
	}
}

// The dialer judges every address a name resolves to before dialling any:
// one refused answer refuses the name, in whichever order it comes, so a
// failing first address cannot make it fall back to a refused one. Only
// loopback is involved: 127.0.0.1 is allowed by a prefix, 127.0.0.2 is
// not.
func TestDialerJudgesEveryAnswer(t *testing.T) {
	target, accepted := loopbackListener(t)
	allow := AllowList{Prefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	ok, other := target.Addr(), netip.MustParseAddr("127.0.0.2")
	var dialled int32 // connections the allowed cases made
	for _, c := range []struct {
		name    string
		answer  []netip.Addr
		refused bool
	}{
		{"allowed alone", []netip.Addr{ok}, false},
		{"allowed, then refused", []netip.Addr{ok, other}, true},
		{"refused, then allowed", []netip.Addr{other, ok}, true},
		{"IPv4-mapped form of the allowed one", []netip.Addr{netip.AddrFrom16(ok.As16())}, false},
	} {
		waitAccepted(t, accepted, dialled)
		before := accepted.Load()
		d := NewDialer(allow, nil, func(context.Context, string) ([]netip.Addr, error) { return c.answer, nil })
		conn, err := d.DialContext(context.Background(), "tcp", "receiver.shop-test.com:"+itoa(target.Port()))
		var blocked *BlockedAddressError
		switch {
		case c.refused && (!errors.As(err, &blocked) || blocked.Addr != other):
			t.Errorf("%s: err = %v, want 127.0.0.2 refused", c.name, err)
		case !c.refused && err != nil:
			t.Errorf("%s: %v", c.name, err)
		}
		if conn != nil {
			dialled++
			conn.Close()
		}
		if c.refused && accepted.Load() != before {
			t.Errorf("%s: a connection was made", c.name)
		}
	}
}

// The development allow list (GATEWAY_CALLBACK_ALLOW_PRIVATE) still lets
// a name resolving to loopback, and localhost, connect; without it they
// are refused before any connection.
func TestDialerLoopbackForDevelopment(t *testing.T) {
	target, accepted := loopbackListener(t)
	port := itoa(target.Port())
	loop := func(context.Context, string) ([]netip.Addr, error) { return []netip.Addr{target.Addr()}, nil }
	var dialled int32
	for _, host := range []string{"receiver.shop-test.com", "localhost", "127.0.0.1"} {
		conn, err := NewDialer(AllowList{AllowPrivate: true}, nil, loop).DialContext(context.Background(), "tcp", net.JoinHostPort(host, port))
		if err != nil {
			t.Errorf("%s with AllowPrivate: %v", host, err)
			continue
		}
		conn.Close()
		dialled++
		waitAccepted(t, accepted, dialled)
		before := accepted.Load()
		if _, err := NewDialer(AllowList{}, nil, loop).DialContext(context.Background(), "tcp", net.JoinHostPort(host, port)); err == nil || !containsLoopback(err) {
			t.Errorf("%s without an allow list: %v, want a loopback refusal", host, err)
		}
		if accepted.Load() != before {
			t.Errorf("%s without an allow list: a connection was made", host)
		}
	}
}

func containsLoopback(err error) bool {
	var blocked *BlockedAddressError
	var e *Error
	return (errors.As(err, &blocked) && blocked.Reason == "loopback") || (errors.As(err, &e) && e.blocked != nil && e.blocked.Reason == "loopback")
}

func itoa(p uint16) string { return strconv.Itoa(int(p)) }
