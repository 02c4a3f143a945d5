package api

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/callbackurl"
)

// A callback_url is refused when it is given, with the sender's rules and
// allow list: 400 naming the field, nothing created. Before, only the
// sender refused such a URL, at the first callback.
func TestCallbackURLRefusedAtSubmission(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.fundedShop()
	refused := []struct{ url, reason string }{
		{"http://127.0.0.1:8080/cb", "loopback"},
		{"http://[::1]/cb", "loopback"},
		{"http://[::ffff:127.0.0.1]/cb", "loopback"},
		{"http://localhost:8080/cb", "loopback"},
		{"http://api.localhost/cb", "loopback"},
		{"http://169.254.169.254/latest/meta-data/", "cloud metadata"},
		{"http://metadata.google.internal/computeMetadata/v1/", "cloud metadata"},
		{"http://169.254.10.10/cb", "link-local"},
		{"http://10.0.0.5/cb", "private"},
		{"http://192.168.1.10/cb", "private"},
		{"http://[fd00::5]/cb", "private"},
		{"http://100.64.0.1/cb", "CGNAT"},
		{"http://0.0.0.0/cb", "unspecified"},
		{"http://2130706433/cb", "dotted-decimal"},
		{"http://0x7f.1/cb", "dotted-decimal"},
		{"http://0177.0.0.1/cb", "dotted-decimal"},
		// Issue 27, point 6: the registries' blocks, IPv4 inside IPv6 and
		// reserved names (the whole table: package callbackurl's tests).
		{"http://[64:ff9b::a00:1]/cb", "of 10.0.0.1, private"},
		{"http://[64:ff9b:1::808:808]/cb", "NAT64 local-use"},
		{"http://[::ffff:0:a00:1]/cb", "IPv4-translated"},
		{"http://[2002:c0a8:101::1]/cb", "of 192.168.1.1, private"},
		{"http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/cb", "Teredo"},
		{"http://[fec0::1]/cb", "site-local"},
		{"http://[100::1]/cb", "discard-only"},
		{"http://[2001:db8::1]/cb", "documentation"},
		{"http://[2001:10::1]/cb", "ORCHID"},
		{"http://198.18.0.1/cb", "benchmarking"},
		{"http://192.0.0.170/cb", "reserved"},
		{"http://203.0.113.7/cb", "TEST-NET-3"},
		{"http://192.88.99.1/cb", "6to4 relay"},
		{"http://localhost6.localdomain6/cb", "loopback"},
		{"http://ip6-loopback/cb", "loopback"},
		{"http://metadata/cb", "cloud metadata"},
		{"http://instance-data/cb", "cloud metadata"},
		{"http://metadata.azure.internal/cb", "cloud metadata"},
		{"http://vault.internal/cb", ".internal"},
		{"http://Shop.Test./cb", ".test"},
		{"http://receiver/cb", "single-label"},
		{"https://shop.example.com:0/cb", "port out of range"},
		{"https://shop.example.com:65536/cb", "port out of range"},
		{"https://shop.example.com:/cb", "empty port"},
		{"ftp://shop.example/cb", "scheme"},
		{"file:///etc/passwd", "scheme"},
		{"javascript:alert(1)", "scheme"},
		{"gopher://shop.example:70/", "scheme"},
		{"https://user:hunter2@shop.example/cb", "user info"},
		{"https://shop.example.com/\\u0000", "ASCII"},
		{"https://shop.example.com/\\u202e", "ASCII"},
		{"https://shop.example.com/" + strings.Repeat("a", callbackurl.BytesMax), "longer than 2048"},
	}
	before := s.journal()
	for _, c := range refused {
		card := s.request(&sh, "POST", "/shop/card/create",
			`{"bin":"453201","currency":"USD","amount":"1.00","callback_url":"`+c.url+`"}`).must(t, 400, 400)
		remit := s.request(&sh, "POST", "/shop/remittance/create",
			remitBody(benDE, `"10.00"`, "EUR", `,"callback_url":"`+c.url+`"`)).must(t, 400, 400)
		for _, a := range []*answer{card, remit} {
			if !strings.HasPrefix(a.Message, "callback_url: ") || !strings.Contains(a.Message, c.reason) {
				t.Errorf("%s: message %q, want callback_url and %q", c.url, a.Message, c.reason)
			}
			if strings.Contains(a.Message, "hunter2") {
				t.Errorf("%s: the message repeats the URL: %q", c.url, a.Message)
			}
		}
	}
	if after := s.journal(); after != before {
		t.Errorf("refused requests changed the journal:\n before %s\n after  %s", before, after)
	}
	// A public name is accepted: it is not resolved at submission.
	s.createCard(sh, `{"bin":"453201","currency":"USD","amount":"1.00","callback_url":"https://shop.example.com/cb"}`)
	s.createRemittance(sh, remitBody(benDE, `"10.00"`, "EUR", `,"callback_url":"https://shop.example.com/cb"`))
}

// With the development allow list (GATEWAY_CALLBACK_ALLOW_PRIVATE or
// listed prefixes) the API accepts what the sender would then reach, and
// still refuses link-local and metadata addresses outside the prefixes.
func TestCallbackURLAllowList(t *testing.T) {
	t.Parallel()
	allow := callbackurl.AllowList{AllowPrivate: true, Prefixes: []netip.Prefix{netip.MustParsePrefix("169.254.10.0/24")}}
	s := newTestServer(t, serverOptions{allow: allow})
	sh := s.fundedShop()
	for _, u := range []string{"http://127.0.0.1:8080/cb", "http://localhost:9/cb", "http://10.0.0.5/cb", "http://[::1]:8080/cb", "http://169.254.10.10/cb"} {
		s.createCard(sh, `{"bin":"453201","currency":"USD","amount":"1.00","callback_url":"`+u+`"}`)
		s.createRemittance(sh, remitBody(benDE, `"10.00"`, "EUR", `,"callback_url":"`+u+`"`))
	}
	for _, u := range []string{"http://169.254.169.254/", "http://[fe80::1]/cb", "http://224.0.0.1/cb"} {
		s.request(&sh, "POST", "/shop/card/create",
			`{"bin":"453201","currency":"USD","amount":"1.00","callback_url":"`+u+`"}`).must(t, 400, 400)
	}
}
