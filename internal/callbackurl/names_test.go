package callbackurl

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// nameVerdict runs a host through the submission door (Validate) and the
// connect door (the dialer, whose resolver answers a public address and
// whose dial is recorded, not made), and returns the one refusal reason.
func nameVerdict(t *testing.T, allow AllowList, host string) string {
	t.Helper()
	var reasons [2]string
	d, dialled := testDialer(allow, netip.MustParseAddr("8.8.8.8"))
	for i, err := range []error{
		Validate("https://"+host+":8443/cb", allow),
		dialErr(d.DialContext(context.Background(), "tcp", host+":8443")),
	} {
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Errorf("%s: door %d: %v is not an *Error", host, i, err)
		} else if err != nil {
			reasons[i] = e.Reason
		}
	}
	if reasons[0] != reasons[1] {
		t.Errorf("%s: submission refused %q, the dialer %q", host, reasons[0], reasons[1])
	}
	if reasons[1] != "" && len(*dialled) != 0 {
		t.Errorf("%s: refused yet dialled %v", host, *dialled)
	}
	return reasons[0]
}

// Reserved names, in any case and with a trailing dot, are refused at
// submission and by the dialer alike; those whose address is known are
// judged as that address (so the development allow list lets localhost
// through, never metadata).
func TestReservedNames(t *testing.T) {
	dev := AllowList{AllowPrivate: true}
	for _, c := range []struct {
		host   string
		reason string // "" = allowed
		dev    bool   // allowed with AllowPrivate
	}{
		{"shop.example.com", "", true},
		{"Hooks.Merchant.CO.UK.", "", true},
		{"xn--mnchen-3ya.de", "", true},
		{"localhost.example.com", "", true},
		{"my-internal.com", "", true},
		{"localhost", "loopback", true},
		{"LOCALHOST.", "loopback", true},
		{"api.localhost", "loopback", true},
		{"a.b.LocalHost.", "loopback", true},
		{"localhost.localdomain", "loopback", true},
		{"localhost4", "loopback", true},
		{"localhost6", "loopback", true},
		{"Localhost6.LocalDomain6.", "loopback", true},
		{"ip6-localhost", "loopback", true},
		{"ip6-loopback", "loopback", true},
		{"ip6-allnodes", "multicast", false},
		{"broadcasthost", "broadcast", false},
		{"metadata", "cloud metadata", false},
		{"METADATA.", "cloud metadata", false},
		{"metadata.google.internal", "cloud metadata", false},
		{"metadata.goog", "cloud metadata", false},
		{"instance-data", "cloud metadata", false},
		{"instance-data.ec2.internal", "cloud metadata", false},
		{"metadata.azure.internal", "cloud metadata", false},
		{"vault.internal", ".internal", true},
		{"db.corp.internal.", ".internal", true},
		{"printer.local", ".local", true},
		{"api.svc.cluster.local", ".local", true},
		{"host.localdomain", ".localdomain", true},
		{"router.home.arpa", ".arpa", true},
		{"ipv4only.arpa", ".arpa", true},
		{"1.0.0.127.in-addr.arpa", ".arpa", true},
		{"shop.invalid", ".invalid", true},
		{"shop.test", ".test", true},
		{"shop.example", ".example", true},
		{"SHOP.EXAMPLE.", ".example", true},
		{"hidden.onion", ".onion", true},
		{"x.alt", ".alt", true},
		{"nas.lan", ".lan", true},
		{"wiki.intranet", ".intranet", true},
		{"kubernetes.default.svc", ".svc", true},
		{"receiver", "single-label", true},
		{"gateway-db.", "single-label", true},
		// Numeric forms of IPv4 addresses (inet_aton, WHATWG URL) are
		// refused as names: write the dotted-decimal address.
		{"2130706433", "dotted-decimal", false},
		{"0177.0.0.1", "dotted-decimal", false},
		{"0x7f.1", "dotted-decimal", false},
		{"0x7F000001", "dotted-decimal", false},
		{"127.1", "dotted-decimal", false},
		{"127.0.1", "dotted-decimal", false},
		{"017700000001", "dotted-decimal", false},
		{"127.000.000.001", "dotted-decimal", false},
		{"127.0.0.1.", "dotted-decimal", false},
		{"0x0a.0x00.0x00.0x01", "dotted-decimal", false},
		{"10.0.0.1.", "dotted-decimal", false},
	} {
		got := nameVerdict(t, AllowList{}, c.host)
		if (c.reason == "" && got != "") || !strings.Contains(got, c.reason) {
			t.Errorf("%s: reason %q, want %q", c.host, got, c.reason)
		}
		if got := nameVerdict(t, dev, c.host); (got == "") != c.dev {
			t.Errorf("%s with AllowPrivate: reason %q, want allowed=%v", c.host, got, c.dev)
		}
	}
	// localhost is judged as both its addresses, as the dialer finds
	// them: a prefix of 127/8 alone does not admit it at either door.
	v4only := AllowList{Prefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	for host, want := range map[string]string{"localhost": "loopback", "api.localhost": "loopback", "localhost4": ""} {
		if got := nameVerdict(t, v4only, host); !strings.Contains(got, want) || (want == "") != (got == "") {
			t.Errorf("%s with 127.0.0.0/8 allowed: reason %q, want %q", host, got, want)
		}
	}
	// An allow-list prefix holding the metadata address lets its names
	// through (a sandbox that serves one), as it does the address.
	sandbox := AllowList{Prefixes: []netip.Prefix{netip.MustParsePrefix("169.254.169.254/32")}}
	if got := nameVerdict(t, sandbox, "metadata"); got != "" {
		t.Errorf("metadata with its prefix allowed: %q", got)
	}
}
