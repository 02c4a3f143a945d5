package callbackurl

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
)

// errNotDialled is what the tests' dialer answers instead of connecting:
// no test sends a packet to a reserved (or any non-loopback) address,
// even when the code under test would wrongly let it through.
var errNotDialled = errors.New("test: would dial")

// testDialer is a Dialer that resolves every name to answer and records
// what it would dial.
func testDialer(allow AllowList, answer ...netip.Addr) (*Dialer, *[]string) {
	var dialled []string
	d := NewDialer(allow, nil, func(context.Context, string) ([]netip.Addr, error) { return answer, nil })
	d.dial = func(_ context.Context, _, address string) (net.Conn, error) {
		dialled = append(dialled, address)
		return nil, errNotDialled
	}
	return d, &dialled
}

// door is one place where the rules are applied to an address.
type door struct {
	name  string
	judge func(AllowList, netip.Addr) error
}

// doors: the submission half (Validate of a URL with the IP literal) and
// the connect half (the socket check, the dialer given the literal, the
// dialer given a name that resolves to the address). Every test of an
// address runs all of them and asks for one verdict: one rule set.
var doors = []door{
	{"submit: Validate(IP literal)", func(l AllowList, a netip.Addr) error {
		host := a.String()
		if a.Is6() {
			host = "[" + host + "]"
		}
		return Validate("https://"+host+"/cb", l)
	}},
	{"connect: AllowList.Check", func(l AllowList, a netip.Addr) error { return l.Check(a) }},
	{"connect: Control(socket address)", func(l AllowList, a netip.Addr) error {
		return l.Control("tcp", netip.AddrPortFrom(a, 443).String(), nil)
	}},
	{"connect: Dialer(IP literal)", func(l AllowList, a netip.Addr) error {
		d, _ := testDialer(l)
		return dialErr(d.DialContext(context.Background(), "tcp", netip.AddrPortFrom(a, 443).String()))
	}},
	{"connect: Dialer(name resolving to it)", func(l AllowList, a netip.Addr) error {
		d, _ := testDialer(l, a)
		return dialErr(d.DialContext(context.Background(), "tcp", "callbacks.shop-test.com:443"))
	}},
}

func dialErr(_ net.Conn, err error) error {
	if errors.Is(err, errNotDialled) {
		return nil
	}
	return err
}

// verdict runs a through every door and returns the one refusal reason
// ("" = allowed), failing the test when the doors disagree.
func verdict(t *testing.T, allow AllowList, a netip.Addr) string {
	t.Helper()
	var first string
	for i, d := range doors {
		err := d.judge(allow, a)
		var reason string
		if err != nil {
			var blocked *BlockedAddressError
			if !errors.As(err, &blocked) {
				t.Errorf("%s, %s: %v is not a *BlockedAddressError", d.name, a, err)
				continue
			}
			reason = blocked.Reason
		}
		if i == 0 {
			first = reason
		} else if reason != first {
			t.Errorf("%s: %s refused %q, %s refused %q", a, doors[0].name, first, d.name, reason)
		}
	}
	return first
}
