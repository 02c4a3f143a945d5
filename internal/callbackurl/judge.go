package callbackurl

import (
	"fmt"
	"net/netip"
)

// Verdict is what the table says of one address.
type Verdict struct {
	Refused bool
	// Private tells that AllowList.AllowPrivate lifts the refusal.
	Private bool
	// Reason is the kind of address ("loopback", "documentation (TEST-NET-1)",
	// "NAT64 (64:ff9b::/96) of 10.0.0.1, private", …); "" when allowed.
	Reason string
	// Range is the most specific row holding the address; nil for none.
	Range *Range
}

// Judge is the one rule of the package: the most specific row of the
// table holding a (zone dropped) decides; an address no row holds is a
// public unicast one. The IPv4 addresses inside an IPv6 form (NAT64,
// 6to4, Teredo, IPv4-mapped, -compatible, -translated) are judged too: a
// refused one refuses the form, and names itself in the reason. Both
// halves of the rules reach it through AllowList.Check: Validate for a
// URL's IP literal and hosts-file names, the dialer for every resolved
// address.
func Judge(a netip.Addr) Verdict {
	a = a.WithZone("")
	if !a.IsValid() {
		return Verdict{Refused: true, Reason: "invalid"}
	}
	r := lookup(a)
	if r == nil {
		return Verdict{}
	}
	v := Verdict{Refused: r.Policy != JudgeEmbedded, Private: r.Policy == RefuseUnlessPrivate, Reason: r.Reason, Range: r}
	if r.embeds == nil {
		return v
	}
	for _, e := range r.embeds(a) {
		in := Judge(e.addr) // an IPv4 address: its rows embed nothing
		if !in.Refused {
			continue
		}
		who := e.addr.String()
		if e.role != "" {
			who = e.role + " " + who
		}
		v.Reason = fmt.Sprintf("%s of %s, %s", r.Reason, who, in.Reason)
		// A form judged by what it holds is as private as that; a form
		// refused anyway (Teredo, IPv4-mapped, …) stays refused.
		v.Refused, v.Private = true, r.Policy == JudgeEmbedded && in.Private
		return v
	}
	if !v.Refused {
		v.Reason = ""
	}
	return v
}

// lookup returns the row with the longest prefix holding a, or nil.
func lookup(a netip.Addr) *Range {
	var best *Range
	for i := range table {
		r := &table[i]
		if r.Prefix.Contains(a) && (best == nil || r.Prefix.Bits() > best.Prefix.Bits()) {
			best = r
		}
	}
	return best
}
