package callbackurl

import (
	"fmt"
	"net/netip"
	"syscall"
)

// AllowList lets callbacks reach addresses that are refused by default.
// The zero value allows only public unicast addresses. The gateway's is
// GATEWAY_CALLBACK_ALLOW_PRIVATE and GATEWAY_CALLBACK_ALLOW_PREFIXES,
// read by internal/config; the API, the operator's commands and the
// callback sender all get that one value, so a URL accepted at submission
// is one the sender may call.
type AllowList struct {
	// Prefixes are allowed whatever kind of address they hold (for
	// instance a merchant's sandbox on 10.20.0.0/16).
	Prefixes []netip.Prefix
	// AllowPrivate allows the rows of policy RefuseUnlessPrivate —
	// loopback, private (RFC 1918, fc00::/7) and CGNAT (100.64.0.0/10),
	// and NAT64/6to4 forms of them — and the names only a local resolver
	// answers (single-label, .internal, .test, …): for local development
	// only. Link-local addresses, cloud metadata endpoints and every other
	// row stay refused unless a Prefix holds them.
	AllowPrivate bool
}

// BlockedAddressError is the refusal of a target address; Reason names the
// kind of address ("loopback", "private", "link-local", …).
type BlockedAddressError struct {
	Addr   netip.Addr
	Reason string
}

func (e *BlockedAddressError) Error() string {
	return fmt.Sprintf("callbacks: refused to connect to %s: %s address", e.Addr, e.Reason)
}

// Check returns nil when a callback may connect to addr, else a
// *BlockedAddressError naming the reason.
func (l AllowList) Check(addr netip.Addr) error {
	a := addr.WithZone("")
	for _, p := range l.Prefixes {
		// An IPv4-mapped address is dialled as the IPv4 address it maps.
		if p.Contains(a) || p.Contains(a.Unmap()) {
			return nil
		}
	}
	v := Judge(a)
	if !v.Refused || (v.Private && l.AllowPrivate) {
		return nil
	}
	return &BlockedAddressError{Addr: a, Reason: v.Reason}
}

// Control is a net.Dialer Control function: it runs after the name is
// resolved and before each connect, so a name that resolves to a refused
// address (DNS rebinding included) is refused on every connection. It is
// the connect-time half of the rules; Validate is the submission-time half.
func (l AllowList) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("callbacks: refused to connect to %q: not an IP address and port", address)
	}
	return l.Check(ap.Addr())
}
