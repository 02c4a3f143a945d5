package httpserve

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// peerAddr is the address of a TCP peer as net/http writes it
// (Request.RemoteAddr, "host:port"), unmapped; the zero Addr when it does
// not parse.
func peerAddr(remote string) netip.Addr {
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

// inPrefixes reports whether a is in one of ps (the trusted proxies).
func inPrefixes(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ClientIP is the caller's address: the TCP peer's, unless the peer is a
// trusted proxy; then X-Forwarded-For is walked from the right (the entry
// the nearest proxy appended) and the first address that is not itself a
// trusted proxy is the client. Entries left of it were written by the
// client or by untrusted hops and are never believed. An entry that does not
// parse ends the walk with an invalid address, which no whitelist admits.
func ClientIP(r *http.Request, proxies []netip.Prefix) netip.Addr {
	peer := peerAddr(r.RemoteAddr)
	if !peer.IsValid() || !inPrefixes(peer, proxies) {
		return peer
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a := parseHop(hops[i])
		if !a.IsValid() {
			return netip.Addr{}
		}
		client = a
		if !inPrefixes(a, proxies) {
			break
		}
	}
	return client
}

// parseHop parses one X-Forwarded-For entry: an address, or an address with
// a port ("[2001:db8::1]:443", "192.0.2.1:80"), which some proxies write.
func parseHop(s string) netip.Addr {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil {
		return a.WithZone("").Unmap()
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().WithZone("").Unmap()
	}
	return netip.Addr{}
}
