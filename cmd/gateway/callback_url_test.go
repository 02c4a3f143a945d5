package main

import (
	"strings"
	"testing"
)

// The operator's --callback-url (merchant create) and --url (merchant
// callback-url) are refused when given, with the rules and allow list of
// the sender: exit status 2 and a message naming the flag, nothing stored.
func TestCallbackURLFlagsRefused(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	c := g.createMerchant("Hooks", "USD")
	for _, tc := range []struct{ url, reason string }{
		{"http://127.0.0.1:8080/hooks", "loopback"},
		{"http://localhost/hooks", "loopback"},
		{"http://[::1]/hooks", "loopback"},
		{"http://169.254.169.254/latest/meta-data/", "cloud metadata"},
		{"http://10.1.2.3/hooks", "private"},
		{"https://shop.example.com:99999/hooks", "port out of range"},
		{"ftp://shop.example/hooks", "scheme"},
		{"https://user:pw@shop.example/hooks", "user info"},
		{"https://shop.example.com/\x1b[31m", "ASCII"},
	} {
		for _, args := range [][]string{
			{"merchant", "create", "--name", "Hooks", "--currencies", "USD", "--callback-url", tc.url},
			{"merchant", "callback-url", "--shop-no", c.ShopNo, "--url", tc.url},
		} {
			r := g.run(args...)
			flagName := args[len(args)-2]
			if r.code() != 2 || r.err == nil || !strings.HasPrefix(r.err.Error(), flagName+": ") || !strings.Contains(r.err.Error(), tc.reason) {
				t.Errorf("gateway %s: exit %d, error %v; want 2 and %s: …%s", strings.Join(args, " "), r.code(), r.err, flagName, tc.reason)
			}
		}
	}
	if out := g.mustRun("merchant", "show", "--shop-no", c.ShopNo); !strings.Contains(out, `"callbackUrl": ""`) {
		t.Errorf("a refused URL was stored: %s", out)
	}
	g.mustRun("merchant", "callback-url", "--shop-no", c.ShopNo, "--url", "https://shop.example.com/hooks")
	g.mustRun("merchant", "callback-url", "--shop-no", c.ShopNo, "--url", "")

	// The development allow list of the gateway applies to the commands too.
	g.env["GATEWAY_CALLBACK_ALLOW_PRIVATE"] = "true"
	g.mustRun("merchant", "callback-url", "--shop-no", c.ShopNo, "--url", "http://127.0.0.1:8080/hooks")
	g.mustFail("cloud metadata", "merchant", "callback-url", "--shop-no", c.ShopNo, "--url", "http://169.254.169.254/")
	g.env["GATEWAY_CALLBACK_ALLOW_PRIVATE"] = "maybe"
	g.mustFail("GATEWAY_CALLBACK_ALLOW_PRIVATE", "merchant", "callback-url", "--shop-no", c.ShopNo, "--url", "https://shop.example.com/")
}
