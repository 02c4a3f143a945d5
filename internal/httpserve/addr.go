package httpserve

import (
	"net"
	"net/netip"
)

// PeerAddr is the address of a TCP peer as net/http writes it
// (Request.RemoteAddr, "host:port"), unmapped; the zero Addr when it does
// not parse.
func PeerAddr(remote string) netip.Addr {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap()
	}
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

// InPrefixes reports whether a is in one of ps (the trusted proxies).
func InPrefixes(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
