package sim

import (
	"fmt"
	"net/netip"

	"github.com/paygate/gateway/internal/callbackurl"
)

// Callback URLs of the classes issue 27 found accepted at submission,
// drawn from the seed beside each remittance the simulation creates. Each
// draw is judged by both halves of the one rule set, in pure Go: the
// submission check (callbackurl.Validate) and the connect-time check
// (AllowList.Check, which the dialer applies to every resolved address)
// must agree, and a reserved form must be refused by both, whatever IPv4
// it embeds. The drawn URL is never given to the remittance: the
// simulation delivers nothing, and a public address drawn here must not
// become a target (traffic stays on this machine).

// simEmbedded are IPv4 addresses an IPv6 form may carry: reserved ones
// (the form must be refused) and public ones (the form's own row decides).
var (
	simEmbeddedReserved = []string{"10.0.0.1", "127.0.0.1", "169.254.169.254", "192.168.1.1", "172.16.0.5",
		"100.64.0.1", "198.18.0.1", "192.0.2.7", "0.0.0.0"}
	simEmbeddedPublic = []string{"8.8.8.8", "93.184.216.34", "1.1.1.1"}
)

// simReservedForms build an IPv6 literal of a reserved class around an
// IPv4 address; each is refused for any address it carries.
var simReservedForms = []func(a netip.Addr) string{
	func(a netip.Addr) string { return "::ffff:" + a.String() },     // IPv4-mapped (SIIT)
	func(a netip.Addr) string { return "::ffff:0:" + a.String() },   // IPv4-translated
	func(a netip.Addr) string { return "64:ff9b:1::" + a.String() }, // local-use NAT64
	func(a netip.Addr) string { return teredoOf(a) },                // Teredo
	func(netip.Addr) string { return "fec0::1" },                    // site-local
	func(netip.Addr) string { return "100::1" },                     // discard-only
	func(netip.Addr) string { return "2001:db8::1" },                // documentation
	func(netip.Addr) string { return "2001:10::1" },                 // ORCHID
	func(netip.Addr) string { return "fd00::1" },                    // unique local
	func(netip.Addr) string { return "fe80::1" },                    // link-local
}

// simEmbeddingForms carry an IPv4 and are judged by it: refused when it is.
var simEmbeddingForms = []func(a netip.Addr) string{
	func(a netip.Addr) string { return "64:ff9b::" + a.String() }, // NAT64
	func(a netip.Addr) string { return sixToFourOf(a) },           // 6to4
}

func teredoOf(a netip.Addr) string {
	b := a.As4()
	return fmt.Sprintf("2001:0:4136:e378:8000:63bf:%02x%02x:%02x%02x", ^b[0], ^b[1], ^b[2], ^b[3])
}

func sixToFourOf(a netip.Addr) string {
	b := a.As4()
	return fmt.Sprintf("2002:%02x%02x:%02x%02x::1", b[0], b[1], b[2], b[3])
}

// checkCallbackClass draws one callback URL and checks both halves agree
// with the class's verdict.
func (s *sim) checkCallbackClass() {
	pick := func(list []string) netip.Addr { return netip.MustParseAddr(list[s.rng.IntN(len(list))]) }
	var host string
	var refused bool
	switch r := s.rng.IntN(100); {
	case r < 40:
		host, refused = simReservedForms[s.rng.IntN(len(simReservedForms))](pick(simEmbeddedPublic)), true
	case r < 70:
		host, refused = simEmbeddingForms[s.rng.IntN(len(simEmbeddingForms))](pick(simEmbeddedReserved)), true
	default:
		host, refused = simEmbeddingForms[s.rng.IntN(len(simEmbeddingForms))](pick(simEmbeddedPublic)), false
	}
	raw := "https://[" + host + "]/hooks"
	submitErr := callbackurl.Validate(raw, callbackurl.AllowList{})
	connectErr := callbackurl.AllowList{}.Check(netip.MustParseAddr(host))
	if (submitErr != nil) != refused || (connectErr != nil) != refused {
		s.fail("callback URL %s: submission %v, connect %v, want refused=%v by both", raw, submitErr, connectErr, refused)
	}
}
