package callbackurl

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// Prefixes allow whatever they hold, nothing else; the refusal's message
// names the address and its kind. Every class of address is in
// TestAddressClasses and TestEveryRowAtSubmitAndConnect.
func TestAllowListCheck(t *testing.T) {
	sandbox := AllowList{Prefixes: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("169.254.169.254/32")}}
	for addr, ok := range map[string]bool{"10.1.2.3": true, "::ffff:10.1.2.3": true, "10.2.0.1": false, "169.254.169.254": true, "169.254.0.1": false, "127.0.0.1": false} {
		if err := sandbox.Check(netip.MustParseAddr(addr)); (err == nil) != ok {
			t.Errorf("prefixes, %s: err = %v, want allowed=%v", addr, err, ok)
		}
	}
	err := AllowList{}.Check(netip.MustParseAddr("127.0.0.1"))
	if got := err.Error(); got != "callbacks: refused to connect to 127.0.0.1: loopback address" {
		t.Errorf("message %q", got)
	}
}

// The Control function refuses at connect time: a real dialer never
// reaches a listener on 127.0.0.1 unless the allow list permits it.
func TestControlAtConnectTime(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	d := net.Dialer{Control: AllowList{}.Control}
	_, err = d.Dial("tcp", ln.Addr().String())
	var blocked *BlockedAddressError
	if !errors.As(err, &blocked) || blocked.Reason != "loopback" {
		t.Fatalf("dial 127.0.0.1 refused with %v, want loopback", err)
	}
	d.Control = AllowList{Prefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}.Control
	c, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("allowed dial: %v", err)
	}
	c.Close()
	if err := (AllowList{}).Control("tcp", "not-an-address", nil); err == nil {
		t.Error("Control accepted an unparsed address")
	}
}

func TestValidate(t *testing.T) {
	dev := AllowList{AllowPrivate: true}
	sandbox := AllowList{Prefixes: []netip.Prefix{netip.MustParsePrefix("169.254.169.254/32")}}
	for _, c := range []struct {
		url    string
		allow  AllowList
		reason string // "" = valid
	}{
		{"https://merchant.example.com/paygate/callbacks", AllowList{}, ""},
		{"http://merchant.example.com:8080/cb?token=abc#frag", AllowList{}, ""},
		{"HTTPS://merchant.example.com/cb", AllowList{}, ""},
		{"https://Merchant.Example.COM./cb", AllowList{}, ""},
		{"https://xn--mnchen-3ya.example.com/cb", AllowList{}, ""},
		{"https://a_b.merchant.example.com/cb", AllowList{}, ""},
		{"https://1.2.3.example.com/cb", AllowList{}, ""},
		{"https://merchant.example.com:1/cb", AllowList{}, ""},
		{"https://merchant.example.com:65535/cb", AllowList{}, ""},
		{"https://merchant.example.com/%E2%82%AC?q=%00", AllowList{}, ""},
		{"https://8.8.8.8/cb", AllowList{}, ""},
		{"https://[2606:4700::1111]/cb", AllowList{}, ""},
		{"https://merchant.example.com/" + strings.Repeat("a", BytesMax-len("https://merchant.example.com/")), AllowList{}, ""},
		{"http://127.0.0.1:8080/cb", dev, ""},
		{"http://localhost:8080/cb", dev, ""},
		{"http://[::1]:8080/cb", dev, ""},
		{"http://10.0.0.5/cb", dev, ""},
		{"http://169.254.169.254/", sandbox, ""},
		{"http://metadata.google.internal/", sandbox, ""},

		{"", AllowList{}, "empty"},
		{"https://merchant.example.com/" + strings.Repeat("a", BytesMax+1-len("https://merchant.example.com/")), AllowList{}, "longer than 2048"},
		{"ftp://merchant.example.com/cb", AllowList{}, "scheme"},
		{"file:///etc/passwd", AllowList{}, "scheme"},
		{"gopher://merchant.example.com/", AllowList{}, "scheme"},
		{"javascript:alert(1)", AllowList{}, "scheme"},
		{"data:text/plain,x", AllowList{}, "scheme"},
		{"//merchant.example.com/cb", AllowList{}, "scheme"},
		{"merchant.example.com/cb", AllowList{}, "scheme"},
		{"http:merchant.example.com", AllowList{}, "absolute URL"},
		{"https://user:pass@merchant.example.com/cb", AllowList{}, "user info"},
		{"https://user@merchant.example.com/cb", AllowList{}, "user info"},
		{"https://@merchant.example.com/cb", AllowList{}, "user info"},
		{"https:///cb", AllowList{}, "host"},
		{"https://:443/cb", AllowList{}, "host"},
		{"https://merchant.example.com:0/cb", AllowList{}, "port"},
		{"https://merchant.example.com:65536/cb", AllowList{}, "port"},
		{"https://merchant.example.com:70000/cb", AllowList{}, "port"},
		{"https://merchant.example.com:99999999999999999999/cb", AllowList{}, "port"},
		{"https://merchant.example.com:-1/cb", AllowList{}, "URL"},
		{"https://merchant.example.com:/cb", AllowList{}, "empty port"},
		{"https://merchant.example.com/a b", AllowList{}, "space"},
		{"https://merchant.example.com/\x00", AllowList{}, "control"},
		{"https://merchant.example.com/\x7f", AllowList{}, "control"},
		{"https://merchant.example.com/\t", AllowList{}, "control"},
		{"https://merchant.example.com/\u202e", AllowList{}, "non-ASCII"},
		{"https://merchant.example.com/\xff", AllowList{}, "non-ASCII"},
		{"https://münchen.example/", AllowList{}, "non-ASCII"},
		{"https://-merchant.example.com/", AllowList{}, "host name"},
		{"https://merchant..example/", AllowList{}, "host name"},
		{"https://merchant.example.com../", AllowList{}, "host name"},
		{"https://mer%63hant.example/", AllowList{}, "parse"},
		{"https://mer!chant.example/", AllowList{}, "host name"},
		{"https://" + strings.Repeat("a", 64) + ".example/", AllowList{}, "host name"},
		{"https://" + strings.Repeat("a.", 127) + "example/", AllowList{}, "host name"},
		{"http://127.0.0.1:8080/cb", AllowList{}, "loopback"},
		{"http://127.1/cb", AllowList{}, "dotted-decimal"},
		{"http://2130706433/cb", AllowList{}, "dotted-decimal"},
		{"http://0x7f000001/cb", AllowList{}, "dotted-decimal"},
		{"http://0x7f.0.0.1/cb", AllowList{}, "dotted-decimal"},
		{"http://127.000.000.001/cb", AllowList{}, "dotted-decimal"},
		{"http://[::1]/cb", AllowList{}, "loopback"},
		{"http://[::ffff:127.0.0.1]/cb", AllowList{}, "loopback"},
		{"http://[127.0.0.1]/cb", AllowList{}, "parse"},
		{"http://10.0.0.5/cb", AllowList{}, "private"},
		{"http://192.168.1.1/cb", AllowList{}, "private"},
		{"http://[fd12::1]/cb", AllowList{}, "private"},
		{"http://169.254.169.254/latest/meta-data/", AllowList{}, "cloud metadata"},
		{"http://169.254.169.254/latest/meta-data/", dev, "cloud metadata"},
		{"http://metadata.google.internal/computeMetadata/v1/", dev, "metadata"},
		{"http://169.254.1.1/", dev, "link-local"},
		{"http://[fe80::1]/", dev, "link-local"},
		{"http://[fe80::1%25eth0]/cb", dev, "zone"},
		{"http://0.0.0.0/cb", dev, "unspecified"},
		{"http://224.0.0.1/cb", dev, "multicast"},
		{"http://255.255.255.255/cb", dev, "reserved"},
		{"http://localhost/cb", AllowList{}, "loopback"},
		{"http://LOCALHOST./cb", AllowList{}, "loopback"},
		{"http://api.localhost./cb", AllowList{}, "loopback"},
		{"http://localhost.localdomain/cb", AllowList{}, "loopback"},
		{"http://ip6-localhost/cb", AllowList{}, "loopback"},
		{"http://100.64.1.1/cb", AllowList{}, "CGNAT"},
		{"http://[64:ff9b::a9fe:a9fe]/", dev, "cloud metadata"},
	} {
		err := Validate(c.url, c.allow)
		if c.reason == "" {
			if err != nil {
				t.Errorf("%q: %v", c.url, err)
			}
			continue
		}
		var e *Error
		if !errors.Is(err, ErrInvalid) || !errors.As(err, &e) || !strings.Contains(e.Reason, c.reason) {
			t.Errorf("%q: err = %v, want %q", c.url, err, c.reason)
		}
		if err != nil && (strings.Contains(err.Error(), "pass") || strings.Contains(err.Error(), "/cb")) {
			t.Errorf("%q: the error shows the URL: %v", c.url, err)
		}
	}
	var blocked *BlockedAddressError
	if err := Validate("http://127.0.0.1/", AllowList{}); !errors.As(err, &blocked) || blocked.Reason != "loopback" {
		t.Errorf("errors.As BlockedAddressError: %v", err)
	}
	if err := Validate("http://localhost/", AllowList{}); !errors.As(err, &blocked) || blocked.Reason != "loopback" {
		t.Errorf("localhost: errors.As BlockedAddressError: %v", err)
	}
}

// FuzzValidate: what Validate accepts is an http or https URL of printable
// ASCII within BytesMax, with a host and a port in range, and an IP
// literal host only if the allow list lets the sender connect to it: the
// submission check never accepts what the connect-time check refuses.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{"https://merchant.example.com/cb", "http://127.0.0.1/", "http://[::1]:80/", "ftp://x", "http://a@b/",
		"http://[fe80::1%25en0]/", "http://2130706433/", "http://localhost./", "https://a.example.com:65535/", "http://[::ffff:10.0.0.1]/",
		"http://[64:ff9b::a00:1]/", "http://[2002:a00:1::]/", "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "http://[fec0::1]/",
		"http://0177.0.0.1/", "http://metadata./", "http://shop.test/", "http://localhost6.localdomain6/"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, raw string, private bool) {
		allow := AllowList{AllowPrivate: private}
		if Validate(raw, allow) != nil {
			return
		}
		if len(raw) > BytesMax {
			t.Fatalf("accepted %d bytes", len(raw))
		}
		for i := 0; i < len(raw); i++ {
			if raw[i] <= 0x20 || raw[i] >= 0x7f {
				t.Fatalf("accepted byte %#x in %q", raw[i], raw)
			}
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
			t.Fatalf("accepted %q", raw)
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				t.Fatalf("accepted port %q", p)
			}
		}
		if a, err := netip.ParseAddr(u.Hostname()); err == nil {
			if err := allow.Control("tcp", netip.AddrPortFrom(a.WithZone(""), 443).String(), nil); err != nil {
				t.Fatalf("accepted %q, which the dialer refuses: %v", raw, err)
			}
		}
		// The connect half applies the same host rules: what was
		// accepted is dialled (here: recorded) once it resolves to a
		// public address.
		d, dialled := testDialer(allow, netip.MustParseAddr("8.8.8.8"))
		if err := dialErr(d.DialContext(context.Background(), "tcp", net.JoinHostPort(u.Hostname(), "443"))); err != nil || len(*dialled) != 1 {
			t.Fatalf("accepted %q, which the dialer refuses: %v", raw, err)
		}
	})
}

// FuzzOneRule: any address, IPv4 or IPv6, gets one verdict from every
// door (submission, allow list, socket check, dialer by literal and by
// name), by default and with the development allow list; and an address
// no row holds is public.
func FuzzOneRule(f *testing.F) {
	for _, s := range []string{"10.0.0.1", "8.8.8.8", "64:ff9b::a00:1", "64:ff9b::808:808", "2002:a00:1::", "2001:0:4136:e378:8000:63bf:3fff:fdd2",
		"::ffff:127.0.0.1", "fec0::1", "2606:4700::1111", "100::1", "3fff::1", "5f00::1", "ff02::1"} {
		f.Add(netip.MustParseAddr(s).AsSlice())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		reason := verdict(t, AllowList{}, a)
		verdict(t, AllowList{AllowPrivate: true}, a)
		if lookup(a) == nil && reason != "" {
			t.Fatalf("%s: in no row, refused %q", a, reason)
		}
	})
}
