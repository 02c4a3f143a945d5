package api

import (
	"bytes"
	"context"
	"net/http"
	"net/netip"
	"testing"

	"github.com/paygate/gateway/internal/merchant"
)

func TestAuthHeaders(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.newShop(merchant.Spec{})
	tests := []struct {
		name       string
		headers    []string // replace the credentials: name, value pairs
		wantStatus int
		wantMsg    string
	}{
		{"canonical names", []string{"X-Shop-No", sh.creds.ShopNo, "X-Public-Key", sh.creds.PublicKey}, 200, ""},
		{"lower-case names", []string{"x-shop-no", sh.creds.ShopNo, "x-public-key", sh.creds.PublicKey}, 200, ""},
		{"upper-case names", []string{"X-SHOP-NO", sh.creds.ShopNo, "X-PUBLIC-KEY", sh.creds.PublicKey}, 200, ""},
		{"mixed-case names", []string{"x-ShOp-nO", sh.creds.ShopNo, "X-public-KEY", sh.creds.PublicKey}, 200, ""},
		{"no shop number", []string{"X-Public-Key", sh.creds.PublicKey}, 400, "X-Shop-No: header is required"},
		{"no public key", []string{"X-Shop-No", sh.creds.ShopNo}, 400, "X-Public-Key: header is required"},
		{"empty shop number", []string{"X-Shop-No", "", "X-Public-Key", sh.creds.PublicKey}, 400, "X-Shop-No: header is required"},
		{"blank public key", []string{"X-Shop-No", sh.creds.ShopNo, "X-Public-Key", "  "}, 400, "X-Public-Key: header is required"},
		{"no headers", nil, 400, "X-Shop-No: header is required"},
		{"wrong key", []string{"X-Shop-No", sh.creds.ShopNo, "X-Public-Key", "pk_wrong"}, 401, messageUnauthorized},
		{"unknown shop", []string{"X-Shop-No", "SH0000000000", "X-Public-Key", sh.creds.PublicKey}, 401, messageUnauthorized},
		{"non-ASCII shop number", []string{"X-Shop-No", "SH\xff\xfe", "X-Public-Key", sh.creds.PublicKey}, 401, messageUnauthorized},
		{"non-ASCII key", []string{"X-Shop-No", sh.creds.ShopNo, "X-Public-Key", "pk_\xc3\x28"}, 401, messageUnauthorized},
		{"private key as public key", []string{"X-Shop-No", sh.creds.ShopNo, "X-Public-Key", sh.creds.PrivateKey}, 401, messageUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Go's client canonicalises header names it is given through
			// Set; writing the map directly sends them as spelled.
			req, _ := http.NewRequest("GET", s.srv.URL+"/shop/account", nil)
			for i := 0; i < len(tt.headers); i += 2 {
				req.Header[tt.headers[i]] = []string{tt.headers[i+1]}
			}
			a := s.send(req)
			code := tt.wantStatus
			if a.status != tt.wantStatus || a.Code != code {
				t.Fatalf("got HTTP %d code %d, want %d: %s", a.status, a.Code, tt.wantStatus, a.raw)
			}
			if tt.wantMsg != "" && a.Message != tt.wantMsg {
				t.Errorf("message %q, want %q", a.Message, tt.wantMsg)
			}
		})
	}
}

// An unknown shop and a wrong key must not be told apart by the answer.
func TestAuthUnknownShopAndWrongKeyIdentical(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.newShop(merchant.Spec{})
	other := s.newShop(merchant.Spec{})
	wrongKey := s.request(nil, "GET", "/shop/account", "", "X-Shop-No", sh.creds.ShopNo, "X-Public-Key", other.creds.PublicKey)
	unknown := s.request(nil, "GET", "/shop/account", "", "X-Shop-No", "SH1234567890", "X-Public-Key", sh.creds.PublicKey)
	wrongKey.must(t, 401, 401)
	unknown.must(t, 401, 401)
	if !bytes.Equal(wrongKey.raw, unknown.raw) {
		t.Errorf("answers differ:\n%s\n%s", wrongKey.raw, unknown.raw)
	}
	for _, h := range []string{"Content-Type", "Content-Length"} {
		if wrongKey.header.Get(h) != unknown.header.Get(h) {
			t.Errorf("header %s differs: %q %q", h, wrongKey.header.Get(h), unknown.header.Get(h))
		}
	}
	golden(t, "401_unauthenticated", wrongKey.raw)
}

func TestAuthDisabledMerchant(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.newShop(merchant.Spec{})
	s.request(&sh, "GET", "/shop/account", "").must(t, 200, 200)
	if err := s.l.SetMerchantStatus(context.Background(), sh.m.ID, merchant.Disabled); err != nil {
		t.Fatal(err)
	}
	a := s.request(&sh, "GET", "/shop/account", "").must(t, 403, 403)
	golden(t, "403_merchant_disabled", a.raw)
	// A POST is refused before its body is looked at.
	s.request(&sh, "POST", "/shop/card/freeze", `{"cardNo":"crd_x"}`).must(t, 403, 403)
	if err := s.l.SetMerchantStatus(context.Background(), sh.m.ID, merchant.Active); err != nil {
		t.Fatal(err)
	}
	s.request(&sh, "GET", "/shop/account", "").must(t, 200, 200)
}

// The test server's peer is 127.0.0.1. A whitelist that excludes it is
// passed only through a trusted proxy's X-Forwarded-For.
func TestAuthIPWhitelist(t *testing.T) {
	t.Parallel()
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	tests := []struct {
		name      string
		proxies   []netip.Prefix
		whitelist []string
		xff       []string
		want      int
	}{
		{"empty whitelist admits all", nil, nil, nil, 200},
		{"peer on the whitelist", nil, []string{"127.0.0.1"}, nil, 200},
		{"peer in a whitelisted CIDR", nil, []string{"10.0.0.0/8", "127.0.0.0/24"}, nil, 200},
		{"peer not on the whitelist", nil, []string{"10.0.0.0/8"}, nil, 403},
		{"IPv6 whitelist only", nil, []string{"2001:db8::/32"}, nil, 403},
		{"forged X-Forwarded-For from an untrusted peer", nil, []string{"10.0.0.0/8"}, []string{"10.1.2.3"}, 403},
		{"trusted proxy forwards a whitelisted client", loopback, []string{"10.0.0.0/8"}, []string{"10.1.2.3"}, 200},
		{"trusted proxy forwards an IPv6 client", loopback, []string{"2001:db8::/32"}, []string{"2001:db8::7"}, 200},
		{"client-written entry left of the proxy's is ignored", loopback, []string{"10.0.0.0/8"}, []string{"10.1.2.3, 203.0.113.9"}, 403},
		{"chain of trusted proxies", loopback, []string{"10.0.0.0/8"}, []string{"192.0.2.1, 10.1.2.3, 127.0.0.5"}, 200},
		{"garbage in X-Forwarded-For", loopback, []string{"10.0.0.0/8"}, []string{"not-an-ip"}, 403},
		{"trusted proxy without X-Forwarded-For is the client", loopback, []string{"127.0.0.1/32"}, nil, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t, serverOptions{proxies: tt.proxies})
			sh := s.newShop(merchant.Spec{IPWhitelist: tt.whitelist})
			var hdr []string
			for _, v := range tt.xff {
				hdr = append(hdr, "X-Forwarded-For", v)
			}
			a := s.request(&sh, "GET", "/shop/account", "", hdr...).must(t, tt.want, tt.want)
			if tt.want == 403 && tt.name == "forged X-Forwarded-For from an untrusted peer" {
				golden(t, "403_ip_not_allowed", a.raw)
			}
		})
	}
}

func TestAuthWhitelistChangedByOperator(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.newShop(merchant.Spec{})
	s.request(&sh, "GET", "/shop/account", "").must(t, 200, 200)
	if err := s.l.SetIPWhitelist(context.Background(), sh.m.ID, []string{"192.0.2.0/24"}); err != nil {
		t.Fatal(err)
	}
	s.request(&sh, "GET", "/shop/account", "").must(t, 403, 403)
}

// The profile shows the time of the last successful authentication.
func TestAuthRecordsLastAuthentication(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.newShop(merchant.Spec{})
	var p struct {
		LastAuthenticatedAt *string `json:"lastAuthenticatedAt"`
	}
	s.request(&sh, "GET", "/shop/account", "").must(t, 200, 200).into(t, &p)
	if p.LastAuthenticatedAt == nil || len(*p.LastAuthenticatedAt) != len("2006-01-02T15:04:05Z") {
		t.Fatalf("lastAuthenticatedAt = %v", p.LastAuthenticatedAt)
	}
}

func TestIPAllowed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr      string
		whitelist []string
		want      bool
	}{
		{"192.0.2.1", nil, true},
		{"192.0.2.1", []string{"192.0.2.0/24"}, true},
		{"192.0.2.1", []string{"192.0.2.1/32"}, true},
		{"192.0.3.1", []string{"192.0.2.0/24"}, false},
		{"2001:db8::1", []string{"192.0.2.0/24", "2001:db8::/32"}, true},
		{"2001:db9::1", []string{"2001:db8::/32"}, false},
		{"192.0.2.1", []string{"::/0"}, false},
		{"invalid IP", []string{"0.0.0.0/0"}, false},
	}
	for _, tt := range tests {
		var a netip.Addr
		if tt.addr != "invalid IP" {
			a = netip.MustParseAddr(tt.addr)
		}
		if got := ipAllowed(a, tt.whitelist); got != tt.want {
			t.Errorf("ipAllowed(%s, %v) = %v, want %v", tt.addr, tt.whitelist, got, tt.want)
		}
	}
}
