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
	// AllowPrivate allows loopback, private (RFC 1918, fc00::/7) and CGNAT
	// (100.64.0.0/10) addresses: for local development only. Link-local
	// addresses and cloud metadata endpoints stay refused unless a Prefix
	// holds them.
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

var (
	cgnat      = netip.MustParsePrefix("100.64.0.0/10")
	thisNet    = netip.MustParsePrefix("0.0.0.0/8")
	reserved4  = netip.MustParsePrefix("240.0.0.0/4") // includes 255.255.255.255
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	v4compat   = netip.MustParsePrefix("::/96")
	metadataV4 = netip.MustParseAddr("169.254.169.254")
	metadataV6 = netip.MustParseAddr("fd00:ec2::254") // AWS IMDS over IPv6
)

// kind classifies an address: "" for a public unicast one, else the reason
// to refuse it; private tells whether AllowPrivate covers it.
func kind(a netip.Addr) (reason string, private bool) {
	a = a.Unmap().WithZone("")
	switch {
	case !a.IsValid():
		return "invalid", false
	case a == metadataV4 || a == metadataV6:
		return "cloud metadata", false
	case a.IsUnspecified() || (a.Is4() && thisNet.Contains(a)):
		return "unspecified", false
	case a.IsLoopback():
		return "loopback", true
	case a.IsMulticast():
		return "multicast", false
	case a.IsLinkLocalUnicast():
		return "link-local", false
	case a.IsPrivate():
		return "private", true
	case cgnat.Contains(a):
		return "CGNAT (100.64.0.0/10)", true
	case a.Is4() && reserved4.Contains(a):
		return "reserved or broadcast", false
	case nat64.Contains(a), v4compat.Contains(a):
		// An IPv4 address in the low 32 bits reaches that address.
		b := a.As16()
		if r, p := kind(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})); r != "" {
			return "IPv4-embedding (" + r + ")", p
		}
	case sixToFour.Contains(a):
		b := a.As16()
		if r, p := kind(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})); r != "" {
			return "6to4 (" + r + ")", p
		}
	}
	return "", false
}

// Check returns nil when a callback may connect to addr, else a
// *BlockedAddressError naming the reason.
func (l AllowList) Check(addr netip.Addr) error {
	a := addr.Unmap().WithZone("")
	for _, p := range l.Prefixes {
		if p.Contains(a) {
			return nil
		}
	}
	reason, private := kind(a)
	if reason == "" || (private && l.AllowPrivate) {
		return nil
	}
	return &BlockedAddressError{Addr: a, Reason: reason}
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
