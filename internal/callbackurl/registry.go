package callbackurl

import "net/netip"

// The address table. Every row names its source: the RFC, and the IANA
// registry it is copied from (the IPv4 and IPv6 Special-Purpose Address
// Registries of RFC 6890, as of 2025, and, for what lies outside them,
// the IPv4/IPv6 (Multicast) Address Space registries or the cloud
// provider's documentation). Global is the registry's "Globally
// Reachable" column ("" when the row is not from a special-purpose
// registry), kept so that a reader can check each decision against it.
//
// The decision (Policy) is stricter than Global: every special-purpose
// block is refused, also those the registry marks globally reachable,
// because those are anycast services of the network (PCP, TURN, AMT,
// AS112, DNS-SD SRP: answered by the nearest operator, possibly ours) or
// identifiers that are not locators (ORCHIDv2, drone DETs): never a
// merchant's web server. The only blocks judged by what they hold are the
// NAT64 well-known prefix 64:ff9b::/96 (how an IPv6-only host with DNS64
// reaches every IPv4 merchant) and 6to4 2002::/16 (the packet goes to the
// embedded IPv4 address): both are allowed exactly when their embedded
// IPv4 address is. docs/callbacks.md §7 lists the decisions.

// Registry names, for Range.Registry.
const (
	regV4      = "IANA IPv4 Special-Purpose Address Registry"
	regV6      = "IANA IPv6 Special-Purpose Address Registry"
	regV4Space = "IANA IPv4 Address Space Registry"
	regV6Space = "IANA IPv6 Address Space Registry"
	regCloud   = "cloud provider documentation"
)

// Policy is what a row means for a callback destination.
type Policy uint8

const (
	// Refuse: never a callback destination (unless an allow-list prefix
	// holds it).
	Refuse Policy = iota
	// RefuseUnlessPrivate: refused, but AllowList.AllowPrivate (local
	// development) allows it: loopback, RFC 1918, CGNAT, unique-local.
	RefuseUnlessPrivate
	// JudgeEmbedded: allowed exactly when the IPv4 address it embeds is.
	JudgeEmbedded
)

// Range is one row of the table.
type Range struct {
	Prefix   netip.Prefix
	Name     string // as the registry names it
	Source   string // the RFC (or document) that defines it
	Registry string
	Global   string // the registry's "Globally Reachable": True, False, N/A, or ""
	Policy   Policy
	Reason   string                       // the kind of address, in refusals
	embeds   func(netip.Addr) []embedded4 // the IPv4 addresses inside, if any
}

// embedded4 is an IPv4 address carried inside an IPv6 one.
type embedded4 struct {
	role string // "" or "server", "client" (Teredo)
	addr netip.Addr
}

// table is the address table; Judge takes the row with the longest prefix
// that holds the address.
var table = []Range{
	// IANA IPv4 Special-Purpose Address Registry.
	{Prefix: pfx("0.0.0.0/8"), Name: `"This network"`, Source: "RFC 791 §3.2", Registry: regV4, Global: "False", Reason: "unspecified"},
	{Prefix: pfx("0.0.0.0/32"), Name: `"This host on this network"`, Source: "RFC 1122 §3.2.1.3", Registry: regV4, Global: "False", Reason: "unspecified"},
	{Prefix: pfx("10.0.0.0/8"), Name: "Private-Use", Source: "RFC 1918", Registry: regV4, Global: "False", Policy: RefuseUnlessPrivate, Reason: "private"},
	{Prefix: pfx("100.64.0.0/10"), Name: "Shared Address Space", Source: "RFC 6598", Registry: regV4, Global: "False", Policy: RefuseUnlessPrivate, Reason: "CGNAT (100.64.0.0/10)"},
	{Prefix: pfx("127.0.0.0/8"), Name: "Loopback", Source: "RFC 1122 §3.2.1.3", Registry: regV4, Global: "False", Policy: RefuseUnlessPrivate, Reason: "loopback"},
	{Prefix: pfx("169.254.0.0/16"), Name: "Link Local", Source: "RFC 3927", Registry: regV4, Global: "False", Reason: "link-local"},
	{Prefix: pfx("172.16.0.0/12"), Name: "Private-Use", Source: "RFC 1918", Registry: regV4, Global: "False", Policy: RefuseUnlessPrivate, Reason: "private"},
	{Prefix: pfx("192.0.0.0/24"), Name: "IETF Protocol Assignments", Source: "RFC 6890 §2.1", Registry: regV4, Global: "False", Reason: "reserved (IETF protocol assignments)"},
	{Prefix: pfx("192.0.0.0/29"), Name: "IPv4 Service Continuity Prefix", Source: "RFC 7335", Registry: regV4, Global: "False", Reason: "reserved (DS-Lite)"},
	{Prefix: pfx("192.0.0.8/32"), Name: "IPv4 dummy address", Source: "RFC 7600", Registry: regV4, Global: "False", Reason: "reserved (dummy)"},
	{Prefix: pfx("192.0.0.9/32"), Name: "Port Control Protocol Anycast", Source: "RFC 7723", Registry: regV4, Global: "True", Reason: "anycast service (PCP)"},
	{Prefix: pfx("192.0.0.10/32"), Name: "Traversal Using Relays around NAT Anycast", Source: "RFC 8155", Registry: regV4, Global: "True", Reason: "anycast service (TURN)"},
	{Prefix: pfx("192.0.0.170/32"), Name: "NAT64/DNS64 Discovery", Source: "RFC 8880, RFC 7050 §2.2", Registry: regV4, Global: "False", Reason: "reserved (NAT64 discovery)"},
	{Prefix: pfx("192.0.0.171/32"), Name: "NAT64/DNS64 Discovery", Source: "RFC 8880, RFC 7050 §2.2", Registry: regV4, Global: "False", Reason: "reserved (NAT64 discovery)"},
	{Prefix: pfx("192.0.2.0/24"), Name: "Documentation (TEST-NET-1)", Source: "RFC 5737", Registry: regV4, Global: "False", Reason: "documentation (TEST-NET-1)"},
	{Prefix: pfx("192.31.196.0/24"), Name: "AS112-v4", Source: "RFC 7535", Registry: regV4, Global: "True", Reason: "anycast service (AS112)"},
	{Prefix: pfx("192.52.193.0/24"), Name: "AMT", Source: "RFC 7450", Registry: regV4, Global: "True", Reason: "anycast service (AMT)"},
	{Prefix: pfx("192.88.99.0/24"), Name: "Deprecated (6to4 Relay Anycast)", Source: "RFC 7526", Registry: regV4, Global: "N/A", Reason: "reserved (6to4 relay anycast)"},
	{Prefix: pfx("192.88.99.2/32"), Name: "6a44-relay anycast address", Source: "RFC 6751", Registry: regV4, Global: "False", Reason: "reserved (6a44 relay)"},
	{Prefix: pfx("192.168.0.0/16"), Name: "Private-Use", Source: "RFC 1918", Registry: regV4, Global: "False", Policy: RefuseUnlessPrivate, Reason: "private"},
	{Prefix: pfx("192.175.48.0/24"), Name: "Direct Delegation AS112 Service", Source: "RFC 7534", Registry: regV4, Global: "True", Reason: "anycast service (AS112)"},
	{Prefix: pfx("198.18.0.0/15"), Name: "Benchmarking", Source: "RFC 2544", Registry: regV4, Global: "False", Reason: "benchmarking"},
	{Prefix: pfx("198.51.100.0/24"), Name: "Documentation (TEST-NET-2)", Source: "RFC 5737", Registry: regV4, Global: "False", Reason: "documentation (TEST-NET-2)"},
	{Prefix: pfx("203.0.113.0/24"), Name: "Documentation (TEST-NET-3)", Source: "RFC 5737", Registry: regV4, Global: "False", Reason: "documentation (TEST-NET-3)"},
	{Prefix: pfx("240.0.0.0/4"), Name: "Reserved", Source: "RFC 1112 §4", Registry: regV4, Global: "False", Reason: "reserved"},
	{Prefix: pfx("255.255.255.255/32"), Name: "Limited Broadcast", Source: "RFC 8190, RFC 919 §7", Registry: regV4, Global: "False", Reason: "reserved (broadcast)"},
	// Outside the IPv4 special-purpose registry.
	{Prefix: pfx("224.0.0.0/4"), Name: "Multicast", Source: "RFC 5771", Registry: regV4Space, Reason: "multicast"},
	{Prefix: pfx("169.254.169.254/32"), Name: "instance metadata (AWS, GCP, Azure, OCI)", Source: "provider docs", Registry: regCloud, Reason: "cloud metadata"},
	{Prefix: pfx("100.100.100.200/32"), Name: "instance metadata (Alibaba Cloud)", Source: "provider docs", Registry: regCloud, Reason: "cloud metadata"},
	{Prefix: pfx("168.63.129.16/32"), Name: "WireServer (Azure)", Source: "provider docs", Registry: regCloud, Reason: "cloud metadata"},

	// IANA IPv6 Special-Purpose Address Registry.
	{Prefix: pfx("::1/128"), Name: "Loopback Address", Source: "RFC 4291", Registry: regV6, Global: "False", Policy: RefuseUnlessPrivate, Reason: "loopback"},
	{Prefix: pfx("::/128"), Name: "Unspecified Address", Source: "RFC 4291", Registry: regV6, Global: "False", Reason: "unspecified"},
	{Prefix: pfx("::ffff:0:0/96"), Name: "IPv4-mapped Address", Source: "RFC 4291", Registry: regV6, Global: "False", Reason: "IPv4-mapped", embeds: low32},
	{Prefix: pfx("64:ff9b::/96"), Name: "IPv4-IPv6 Translat.", Source: "RFC 6052", Registry: regV6, Global: "True", Policy: JudgeEmbedded, Reason: "NAT64 (64:ff9b::/96)", embeds: low32},
	{Prefix: pfx("64:ff9b:1::/48"), Name: "IPv4-IPv6 Translat.", Source: "RFC 8215", Registry: regV6, Global: "False", Reason: "NAT64 local-use (64:ff9b:1::/48)", embeds: nat64Local},
	{Prefix: pfx("100::/64"), Name: "Discard-Only Address Block", Source: "RFC 6666", Registry: regV6, Global: "False", Reason: "discard-only"},
	{Prefix: pfx("100:0:0:1::/64"), Name: "Dummy IPv6 Prefix", Source: "RFC 9780", Registry: regV6, Global: "False", Reason: "reserved (dummy)"},
	{Prefix: pfx("2001::/23"), Name: "IETF Protocol Assignments", Source: "RFC 2928", Registry: regV6, Global: "False", Reason: "reserved (IETF protocol assignments)"},
	{Prefix: pfx("2001::/32"), Name: "TEREDO", Source: "RFC 4380, RFC 8190", Registry: regV6, Global: "N/A", Reason: "Teredo (2001::/32)", embeds: teredo},
	{Prefix: pfx("2001:1::1/128"), Name: "Port Control Protocol Anycast", Source: "RFC 7723", Registry: regV6, Global: "True", Reason: "anycast service (PCP)"},
	{Prefix: pfx("2001:1::2/128"), Name: "Traversal Using Relays around NAT Anycast", Source: "RFC 8155", Registry: regV6, Global: "True", Reason: "anycast service (TURN)"},
	{Prefix: pfx("2001:1::3/128"), Name: "DNS-SD Service Registration Protocol Anycast", Source: "RFC 9665", Registry: regV6, Global: "True", Reason: "anycast service (DNS-SD SRP)"},
	{Prefix: pfx("2001:2::/48"), Name: "Benchmarking", Source: "RFC 5180, RFC Errata 1752", Registry: regV6, Global: "False", Reason: "benchmarking"},
	{Prefix: pfx("2001:3::/32"), Name: "AMT", Source: "RFC 7450", Registry: regV6, Global: "True", Reason: "anycast service (AMT)"},
	{Prefix: pfx("2001:4:112::/48"), Name: "AS112-v6", Source: "RFC 7535", Registry: regV6, Global: "True", Reason: "anycast service (AS112)"},
	{Prefix: pfx("2001:10::/28"), Name: "Deprecated (previously ORCHID)", Source: "RFC 4843", Registry: regV6, Global: "N/A", Reason: "reserved (ORCHID)"},
	{Prefix: pfx("2001:20::/28"), Name: "ORCHIDv2", Source: "RFC 7343", Registry: regV6, Global: "True", Reason: "identifier, not a locator (ORCHIDv2)"},
	{Prefix: pfx("2001:30::/28"), Name: "Drone Remote ID Protocol Entity Tags (DETs) Prefix", Source: "RFC 9374", Registry: regV6, Global: "True", Reason: "identifier, not a locator (DET)"},
	{Prefix: pfx("2001:db8::/32"), Name: "Documentation", Source: "RFC 3849", Registry: regV6, Global: "False", Reason: "documentation"},
	{Prefix: pfx("2002::/16"), Name: "6to4", Source: "RFC 3056", Registry: regV6, Global: "N/A", Policy: JudgeEmbedded, Reason: "6to4 (2002::/16)", embeds: sixToFour},
	{Prefix: pfx("2620:4f:8000::/48"), Name: "Direct Delegation AS112 Service", Source: "RFC 7534", Registry: regV6, Global: "True", Reason: "anycast service (AS112)"},
	{Prefix: pfx("3fff::/20"), Name: "Documentation", Source: "RFC 9637", Registry: regV6, Global: "False", Reason: "documentation"},
	{Prefix: pfx("5f00::/16"), Name: "Segment Routing (SRv6) SIDs", Source: "RFC 9602", Registry: regV6, Global: "False", Reason: "reserved (SRv6 SIDs)"},
	{Prefix: pfx("fc00::/7"), Name: "Unique-Local", Source: "RFC 4193, RFC 8190", Registry: regV6, Global: "False", Policy: RefuseUnlessPrivate, Reason: "private"},
	{Prefix: pfx("fe80::/10"), Name: "Link-Local Unicast", Source: "RFC 4291", Registry: regV6, Global: "False", Reason: "link-local"},
	// IANA IPv6 Address Space Registry: only 2000::/3 is global unicast;
	// every other block is reserved by the IETF, unique-local (above),
	// link-local (above), the former site-local or multicast.
	{Prefix: pfx("::/96"), Name: "IPv4-compatible (deprecated)", Source: "RFC 4291 §2.5.5.1", Registry: regV6Space, Reason: "IPv4-compatible", embeds: low32},
	{Prefix: pfx("::ffff:0:0:0/96"), Name: "IPv4-translated (SIIT)", Source: "RFC 2765 §2.1", Registry: regV6Space, Reason: "IPv4-translated", embeds: low32},
	{Prefix: pfx("::/8"), Name: "Reserved by IETF", Source: "RFC 4291", Registry: regV6Space, Reason: "reserved (::/8)"},
	{Prefix: pfx("100::/8"), Name: "Reserved by IETF", Source: "RFC 4291", Registry: regV6Space, Reason: "reserved (outside 2000::/3)"},
	{Prefix: pfx("200::/7"), Name: "Reserved by IETF", Source: "RFC 4048", Registry: regV6Space, Reason: "reserved (outside 2000::/3)"},
	{Prefix: pfx("400::/6"), Name: "Reserved by IETF", Source: "RFC 4291", Registry: regV6Space, Reason: "reserved (outside 2000::/3)"},
	{Prefix: pfx("800::/5"), Name: "Reserved by IETF", Source: "RFC 4291", Registry: regV6Space, Reason: "reserved (outside 2000::/3)"},
	{Prefix: pfx("1000::/4"), Name: "Reserved by IETF", Source: "RFC 4291", Registry: regV6Space, Reason: "reserved (outside 2000::/3)"},
	{Prefix: pfx("4000::/2"), Name: "Reserved by IETF (4000::/3, 6000::/3)", Source: "RFC 4291", Registry: regV6Space, Reason: "reserved (outside 2000::/3)"},
	{Prefix: pfx("8000::/2"), Name: "Reserved by IETF (8000::/3, a000::/3)", Source: "RFC 4291", Registry: regV6Space, Reason: "reserved (outside 2000::/3)"},
	{Prefix: pfx("c000::/3"), Name: "Reserved by IETF", Source: "RFC 4291", Registry: regV6Space, Reason: "reserved (outside 2000::/3)"},
	{Prefix: pfx("e000::/4"), Name: "Reserved by IETF", Source: "RFC 4291", Registry: regV6Space, Reason: "reserved (outside 2000::/3)"},
	{Prefix: pfx("f000::/5"), Name: "Reserved by IETF", Source: "RFC 4291", Registry: regV6Space, Reason: "reserved (outside 2000::/3)"},
	{Prefix: pfx("f800::/6"), Name: "Reserved by IETF", Source: "RFC 4291", Registry: regV6Space, Reason: "reserved (outside 2000::/3)"},
	{Prefix: pfx("fe00::/9"), Name: "Reserved by IETF", Source: "RFC 4291", Registry: regV6Space, Reason: "reserved (outside 2000::/3)"},
	{Prefix: pfx("fec0::/10"), Name: "Reserved by IETF (formerly site-local)", Source: "RFC 3879", Registry: regV6Space, Reason: "site-local (deprecated)"},
	{Prefix: pfx("ff00::/8"), Name: "Multicast", Source: "RFC 4291 §2.7", Registry: regV6Space, Reason: "multicast"},
	{Prefix: pfx("fd00:ec2::254/128"), Name: "instance metadata over IPv6 (AWS)", Source: "provider docs", Registry: regCloud, Reason: "cloud metadata"},
}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// low32 is the IPv4 address in the last 32 bits (IPv4-mapped,
// -compatible, -translated, and NAT64 with a /96 prefix, RFC 6052 §2.2).
func low32(a netip.Addr) []embedded4 {
	b := a.As16()
	return []embedded4{{addr: netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})}}
}

// sixToFour is the IPv4 address of 2002:AABB:CCDD::/48 (RFC 3056 §2).
func sixToFour(a netip.Addr) []embedded4 {
	b := a.As16()
	return []embedded4{{addr: netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})}}
}

// teredo gives the server's IPv4 address (bits 32-63) and the client's
// (the last 32 bits, inverted) of a Teredo address (RFC 4380 §4).
func teredo(a netip.Addr) []embedded4 {
	b := a.As16()
	return []embedded4{
		{role: "server", addr: netip.AddrFrom4([4]byte{b[4], b[5], b[6], b[7]})},
		{role: "client", addr: netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})},
	}
}

// nat64Local gives the IPv4 address a local-use NAT64 address would carry
// with a /48 prefix (bits 48-63 and 72-87, skipping the u octet) and with
// a /96 one (RFC 6052 §2.2): the operator picks the length, so both are
// named, but not a reading of 0.0.0.0 (the zero padding of the other
// length); the block is refused whatever it holds.
func nat64Local(a netip.Addr) []embedded4 {
	b := a.As16()
	var out []embedded4
	for _, e := range append([]embedded4{{addr: netip.AddrFrom4([4]byte{b[6], b[7], b[9], b[10]})}}, low32(a)...) {
		if !e.addr.IsUnspecified() {
			out = append(out, e)
		}
	}
	return out
}
