package main

import (
	"strings"
	"testing"
)

// The operator's free text is refused like the API's (postings.CheckText),
// naming the flag: a merchant's name is shown to people and in terminals.
// A rail return reason is a code, never free text.
func TestCLIFreeTextRefused(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	for _, tc := range []struct{ name, want string }{
		{"Acme\x1b[2J", "control characters (U+001B"},
		{"Acme\nLtd", "control characters (U+000A"},
		{"Ac\u0085me", "control characters (U+0085"},
		{"\u202eemcA", "bidirectional formatting characters (U+202E"},
		{"Ac\u200bme", "invisible format characters (U+200B"},
		{"Acme \xff", "must be valid UTF-8"},
		{strings.Repeat("é", 201), "longer than 200 characters"},
	} {
		g.mustFail("--name: ", "merchant", "create", "--name", tc.name, "--currencies", "USD")
		g.mustFail(tc.want, "merchant", "create", "--name", tc.name, "--currencies", "USD")
	}
	g.createMerchant("Müller & Söhne 北京 👩\u200d💻", "USD")
	for _, reason := range []string{"\x1b[31mAC01", "AC01\n", "not a code", "ac01x"} {
		g.mustFail("--reason: must be an ISO 20022 return reason code", "rail", "return", "--tx-id", "rmt_nosuchremittance0000", "--reason", reason)
	}
	// Only a return carries a reason: settle has no --reason at all.
	g.mustFail("flag provided but not defined: -reason", "rail", "settle", "--tx-id", "rmt_nosuchremittance0000", "--reason", "AC01")
}
