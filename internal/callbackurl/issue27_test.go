package callbackurl

import (
	"errors"
	"testing"
)

// Issue 27, point 6: these callback URLs were accepted when given (and
// the sender, with the same rules, would have dialled them). Each is now
// refused, by default and with the development allow list alike, but for
// the private ones that list exists for. Uses only Validate, so that it
// also runs against the code before the fix (where it fails).
func TestIssue27ReservedCallbackURLs(t *testing.T) {
	for _, c := range []struct {
		url string
		dev bool // allowed with AllowPrivate
	}{
		{"http://[64:ff9b::a00:1]/cb", true},                        // NAT64 of 10.0.0.1: private, as 10.0.0.1
		{"http://[64:ff9b::c000:201]/cb", false},                    // NAT64 of TEST-NET-1
		{"http://[64:ff9b:1::a00:1]/cb", false},                     // NAT64 local-use
		{"http://[64:ff9b:1::808:808]/cb", false},                   // local-use, whatever it holds
		{"http://[::ffff:0:a00:1]/cb", false},                       // IPv4-translated (SIIT)
		{"http://[::ffff:808:808]/cb", false},                       // IPv4-mapped
		{"http://[fec0::1]/cb", false},                              // site-local
		{"http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/cb", false}, // Teredo
		{"http://[2001:0:a00:1::]/cb", false},                       // Teredo, server 10.0.0.1
		{"http://[2002:c0a8:101::1]/cb", true},                      // 6to4 of 192.168.1.1
		{"http://[2002:c612:1::1]/cb", false},                       // 6to4 of 198.18.0.1
		{"http://[100::1]/cb", false},                               // discard-only
		{"http://[2001:db8::1]/cb", false},                          // documentation
		{"http://[3fff::1]/cb", false},                              // documentation
		{"http://[2001:10::1]/cb", false},                           // ORCHID
		{"http://[2001:20::1]/cb", false},                           // ORCHIDv2
		{"http://[5f00::1]/cb", false},                              // SRv6
		{"http://[2001:2::1]/cb", false},                            // benchmarking
		{"http://198.18.0.1/cb", false},
		{"http://198.19.10.10/cb", false},
		{"http://192.0.0.8/cb", false},
		{"http://192.0.0.170/cb", false},
		{"http://192.0.2.1/cb", false},
		{"http://198.51.100.1/cb", false},
		{"http://203.0.113.1/cb", false},
		{"http://192.88.99.1/cb", false},
		{"http://192.31.196.1/cb", false},
		{"http://192.52.193.1/cb", false},
		{"http://192.175.48.1/cb", false},
		{"http://localhost6/cb", true},
		{"http://localhost6.localdomain6/cb", true},
		{"http://ip6-localhost/cb", true},
		{"http://ip6-loopback/cb", true},
		{"http://metadata/computeMetadata/v1/", false},
		{"http://instance-data/latest/meta-data/", false},
		{"http://metadata.azure.internal/", false},
		{"http://vault.internal/cb", true},
		{"http://printer.local/cb", true},
		{"http://shop.test/cb", true},
		{"http://shop.example/cb", true},
		{"http://router.home.arpa/cb", true},
		{"http://receiver/cb", true},
	} {
		if err := Validate(c.url, AllowList{}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: accepted", c.url)
		}
		if err := Validate(c.url, AllowList{AllowPrivate: true}); (err == nil) != c.dev {
			t.Errorf("%s with AllowPrivate: err = %v, want allowed=%v", c.url, err, c.dev)
		}
	}
}
