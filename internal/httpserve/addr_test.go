package httpserve

import (
	"net/http"
	"net/netip"
	"testing"
)

func TestClientIP(t *testing.T) {
	t.Parallel()
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	tests := []struct {
		name   string
		remote string
		xff    []string
		want   string
	}{
		{"peer without proxies", "192.0.2.1:5000", nil, "192.0.2.1"},
		{"untrusted peer's header ignored", "192.0.2.1:5000", []string{"198.51.100.1"}, "192.0.2.1"},
		{"trusted peer, one hop", "10.0.0.1:5000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"trusted peer, forged left part", "10.0.0.1:5000", []string{"1.1.1.1, 198.51.100.1"}, "198.51.100.1"},
		{"two header lines", "10.0.0.1:5000", []string{"1.1.1.1", "198.51.100.1, 10.0.0.2"}, "198.51.100.1"},
		{"all trusted: leftmost", "10.0.0.1:5000", []string{"10.0.0.3, 10.0.0.2"}, "10.0.0.3"},
		{"no header: the peer", "10.0.0.1:5000", nil, "10.0.0.1"},
		{"IPv6 peer", "[2001:db8::1]:443", nil, "2001:db8::1"},
		{"IPv6 proxy and client", "[fd00::1]:443", []string{"2001:db8::9"}, "2001:db8::9"},
		{"hop with port", "10.0.0.1:5000", []string{"[2001:db8::9]:1234"}, "2001:db8::9"},
		{"mapped IPv4 peer", "[::ffff:192.0.2.1]:80", nil, "192.0.2.1"},
		{"garbage hop", "10.0.0.1:5000", []string{"1.1.1.1, nonsense"}, "invalid IP"},
		{"empty hop", "10.0.0.1:5000", []string{"1.1.1.1,"}, "invalid IP"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &http.Request{RemoteAddr: tt.remote, Header: http.Header{}}
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := ClientIP(r, proxies).String(); got != tt.want {
				t.Errorf("ClientIP = %s, want %s", got, tt.want)
			}
		})
	}
}
