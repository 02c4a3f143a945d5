package callbackurl

import (
	"net/netip"
	"strings"
	"testing"
)

// samples gives addresses for which r is the most specific row: its
// first, second and last address, when no narrower row takes them.
func samples(r *Range) []netip.Addr {
	first := r.Prefix.Masked().Addr()
	b := first.AsSlice()
	for i := r.Prefix.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	last, _ := netip.AddrFromSlice(b)
	var out []netip.Addr
	for _, a := range []netip.Addr{first, first.Next(), last} {
		if lookup(a) == r {
			out = append(out, a)
		}
	}
	return out
}

// Every row of the table, through every door, by default and with the
// development allow list: refused (but for the rows judged by what they
// embed, whose samples hold 0.0.0.0 or 255.255.255.255 and so are refused
// too), with the row's reason, and allowed under AllowPrivate exactly for
// the rows of policy RefuseUnlessPrivate.
func TestEveryRowAtSubmitAndConnect(t *testing.T) {
	dev := AllowList{AllowPrivate: true}
	for i := range table {
		r := &table[i]
		if r.Source == "" || r.Registry == "" || r.Name == "" || r.Reason == "" {
			t.Errorf("row %s lacks its source, registry, name or reason", r.Prefix)
		}
		if r.Registry != regV4Space && r.Registry != regV6Space && r.Registry != regCloud && r.Global == "" {
			t.Errorf("row %s of a special-purpose registry lacks Globally Reachable", r.Prefix)
		}
		got := samples(r)
		if len(got) == 0 {
			t.Errorf("row %s: narrower rows cover it all", r.Prefix)
		}
		for _, a := range got {
			reason := verdict(t, AllowList{}, a)
			if reason == "" || !strings.HasPrefix(reason, r.Reason) {
				t.Errorf("%s (row %s, %s): reason %q, want %q", a, r.Prefix, r.Name, reason, r.Reason)
			}
			devReason := verdict(t, dev, a)
			if wantAllowed := r.Policy == RefuseUnlessPrivate; (devReason == "") != wantAllowed {
				t.Errorf("%s (row %s) with AllowPrivate: reason %q, want allowed=%v", a, r.Prefix, devReason, wantAllowed)
			}
			if err := (AllowList{Prefixes: []netip.Prefix{r.Prefix}}).Check(a); err != nil {
				t.Errorf("%s with its row's prefix allowed: %v", a, err)
			}
		}
	}
}

// The registry blocks the issue named, and others inside them, give the
// reason of their row; public addresses pass every door.
func TestAddressClasses(t *testing.T) {
	dev := AllowList{AllowPrivate: true}
	for _, c := range []struct {
		addr   string
		reason string // "" = allowed
		dev    bool   // allowed with AllowPrivate
	}{
		{"8.8.8.8", "", true},
		{"1.1.1.1", "", true},
		{"2606:4700::1111", "", true},
		{"2a00:1450:4001:82b::200e", "", true},
		{"172.32.0.1", "", true},
		{"100.128.0.1", "", true},
		{"198.20.0.1", "", true},
		{"192.0.1.1", "", true},
		{"192.88.98.255", "", true},
		{"0.0.0.0", "unspecified", false},
		{"0.255.1.2", "unspecified", false},
		{"10.200.3.4", "private", true},
		{"100.64.0.1", "CGNAT", true},
		{"100.127.255.254", "CGNAT", true},
		{"127.53.0.1", "loopback", true},
		{"169.254.3.4", "link-local", false},
		{"169.254.169.254", "cloud metadata", false},
		{"100.100.100.200", "cloud metadata", false},
		{"168.63.129.16", "cloud metadata", false},
		{"172.31.255.255", "private", true},
		{"192.0.0.1", "reserved", false},
		{"192.0.0.9", "anycast", false},
		{"192.0.0.200", "reserved (IETF", false},
		{"192.0.2.77", "TEST-NET-1", false},
		{"192.31.196.1", "AS112", false},
		{"192.52.193.9", "AMT", false},
		{"192.88.99.1", "6to4 relay", false},
		{"192.168.255.1", "private", true},
		{"192.175.48.6", "AS112", false},
		{"198.18.0.1", "benchmarking", false},
		{"198.19.255.254", "benchmarking", false},
		{"198.51.100.9", "TEST-NET-2", false},
		{"203.0.113.200", "TEST-NET-3", false},
		{"224.0.0.251", "multicast", false},
		{"239.1.2.3", "multicast", false},
		{"240.1.2.3", "reserved", false},
		{"255.255.255.254", "reserved", false},
		{"255.255.255.255", "broadcast", false},
		{"::", "unspecified", false},
		{"::1", "loopback", true},
		{"::2", "IPv4-compatible", false},
		{"100::1", "discard-only", false},
		{"100::ffff:ffff:ffff:ffff", "discard-only", false},
		{"2001:2::9", "benchmarking", false},
		{"2001:10::1", "ORCHID", false},
		{"2001:1f::1", "ORCHID", false},
		{"2001:20::1", "ORCHIDv2", false},
		{"2001:2f:ffff::1", "ORCHIDv2", false},
		{"2001:30::1", "DET", false},
		{"2001:db8::1", "documentation", false},
		{"2001:db8:ffff:ffff::1", "documentation", false},
		{"2001:100::1", "IETF protocol", false},
		{"3fff::1", "documentation", false},
		{"3fff:fff:ffff::1", "documentation", false},
		{"3fff:1000::1", "", true},
		{"4000::1", "outside 2000::/3", false},
		{"5f00:1:2::3", "SRv6", false},
		{"e000::1", "outside 2000::/3", false},
		{"fc00::1", "private", true},
		{"fdff:ffff::1", "private", true},
		{"fd00:ec2::254", "cloud metadata", false},
		{"fe80::1", "link-local", false},
		{"febf::1", "link-local", false},
		{"fec0::1", "site-local", false},
		{"feff::1", "site-local", false},
		{"ff02::1", "multicast", false},
		{"ff0e::101", "multicast", false},
		{"2620:4f:8000::42", "AS112", false},
		{"2001:4:112::1", "AS112", false},
		{"2001:1::1", "PCP", false},
		// IPv4 inside IPv6: NAT64 well-known prefix and 6to4 are judged by
		// what they hold (and are as private as that); the other forms are
		// refused whatever they hold, naming it.
		{"64:ff9b::8.8.8.8", "", true},
		{"64:ff9b::10.0.0.1", "NAT64 (64:ff9b::/96) of 10.0.0.1, private", true},
		{"64:ff9b::127.0.0.1", "of 127.0.0.1, loopback", true},
		{"64:ff9b::169.254.169.254", "of 169.254.169.254, cloud metadata", false},
		{"64:ff9b::192.0.2.1", "of 192.0.2.1, documentation (TEST-NET-1)", false},
		{"64:ff9b::198.18.0.1", "benchmarking", false},
		{"64:ff9b::100.64.0.1", "CGNAT", true},
		{"64:ff9b:1::8.8.8.8", "NAT64 local-use", false},
		{"64:ff9b:1:a00:0:100::", "NAT64 local-use (64:ff9b:1::/48) of 10.0.0.1, private", false},
		{"64:ff9b:1::10.0.0.1", "of 10.0.0.1, private", false},
		{"2002:808:808::1", "", true},
		{"2002:a00:1::", "6to4 (2002::/16) of 10.0.0.1, private", true},
		{"2002:7f00:1::1", "of 127.0.0.1, loopback", true},
		{"2002:a9fe:a9fe::", "cloud metadata", false},
		{"2002:c000:201::", "TEST-NET-1", false},
		{"2002:c0a8:101:1::5", "of 192.168.1.1, private", true},
		{"2002::", "of 0.0.0.0, unspecified", false},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo (2001::/32) of client 192.0.2.45, documentation", false},
		{"2001:0:4136:e378:8000:63bf:f5ff:fffe", "of client 10.0.0.1, private", false},
		{"2001:0:7f00:1::", "of server 127.0.0.1, loopback", false},
		{"2001:0:808:808:0:0:f7f7:f7f7", "Teredo (2001::/32)", false},
		{"::ffff:8.8.8.8", "IPv4-mapped", false},
		{"::ffff:10.0.0.1", "IPv4-mapped of 10.0.0.1, private", false},
		{"::ffff:127.0.0.1", "loopback", false},
		{"::ffff:0:8.8.8.8", "IPv4-translated", false},
		{"::ffff:0:a9fe:a9fe", "IPv4-translated of 169.254.169.254, cloud metadata", false},
		{"::8.8.8.8", "IPv4-compatible", false},
		{"::10.0.0.1", "IPv4-compatible of 10.0.0.1, private", false},
	} {
		a := netip.MustParseAddr(c.addr)
		if got := verdict(t, AllowList{}, a); (c.reason == "" && got != "") || !strings.Contains(got, c.reason) {
			t.Errorf("%s: reason %q, want %q", c.addr, got, c.reason)
		}
		if got := verdict(t, dev, a); (got == "") != c.dev {
			t.Errorf("%s with AllowPrivate: reason %q, want allowed=%v", c.addr, got, c.dev)
		}
	}
}
