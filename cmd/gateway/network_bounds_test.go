package main

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/network"
)

// The network bounds of serve: amounts in minor units with each currency's
// exponent, a percentage in basis points, and every value serve cannot
// read refused with a usage error naming its flag.
func TestNetworkBoundsFlags(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		env  map[string]string
		args []string
		want string // fmt of the bounds, or the error
	}{
		{name: "defaults", want: "map[] 2000 map[]"},
		{name: "environment", env: map[string]string{
			"GATEWAY_NETWORK_MESSAGE_MAX":          "USD:1000000.00, JPY:150000000,KWD:0.001",
			"GATEWAY_NETWORK_OVER_CAPTURE_PCT":     "12.5",
			"GATEWAY_NETWORK_UNMATCHED_REFUND_MAX": "EUR:50",
		}, want: "map[JPY:150000000 KWD:1 USD:100000000] 1250 map[EUR:5000]"},
		{name: "flags win", env: map[string]string{"GATEWAY_NETWORK_OVER_CAPTURE_PCT": "12.5"},
			args: []string{"--network-over-capture-pct", "0"}, want: fmt.Sprintf("map[] %d map[]", network.NoOverCapture)},
		{name: "a hundred percent", args: []string{"--network-over-capture-pct", "100.00"}, want: "map[] 10000 map[]"},
		{name: "too many decimals", args: []string{"--network-message-max", "USD:1.005"}, want: "--network-message-max: USD 1.005: USD allows at most 2 decimals"},
		{name: "JPY decimals", args: []string{"--network-message-max", "JPY:1.5"}, want: "--network-message-max: JPY 1.5"},
		{name: "zero", args: []string{"--network-unmatched-refund-max", "USD:0"}, want: "--network-unmatched-refund-max: USD 0: must be greater than zero"},
		{name: "negative", args: []string{"--network-message-max", "USD:-1"}, want: "--network-message-max"},
		{name: "unknown currency", args: []string{"--network-message-max", "XYZ:1"}, want: `--network-message-max: "XYZ" is not a supported`},
		{name: "lower case", args: []string{"--network-message-max", "usd:1"}, want: `--network-message-max: "usd"`},
		{name: "twice", args: []string{"--network-message-max", "USD:1,USD:2"}, want: "USD appears twice"},
		{name: "no colon", args: []string{"--network-message-max", "USD 1"}, want: "is not CUR:amount"},
		{name: "empty item", args: []string{"--network-message-max", "USD:1,"}, want: "is not CUR:amount"},
		{name: "percent above 100", args: []string{"--network-over-capture-pct", "100.01"}, want: "--network-over-capture-pct"},
		{name: "percent negative", args: []string{"--network-over-capture-pct", "-1"}, want: "--network-over-capture-pct"},
		{name: "percent three decimals", args: []string{"--network-over-capture-pct", "1.005"}, want: "--network-over-capture-pct"},
		{name: "percent empty", args: []string{"--network-over-capture-pct", ""}, want: "--network-over-capture-pct"},
		{name: "percent trailing dot", args: []string{"--network-over-capture-pct", "20."}, want: "--network-over-capture-pct"},
		{name: "percent sign", args: []string{"--network-over-capture-pct", "20%"}, want: "--network-over-capture-pct"},
		{name: "percent huge", args: []string{"--network-over-capture-pct", "99999999999999999999"}, want: "--network-over-capture-pct"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := &env{getenv: func(k string) string { return tt.env[k] }}
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			f := addNetworkBoundsFlags(e, fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			b, err := f.bounds()
			got := fmt.Sprint(b.MessageMax, " ", b.OverCaptureBps, " ", b.UnmatchedRefundMax)
			if err != nil {
				got = err.Error()
				if exitCode(err) != 2 {
					t.Errorf("exit code %d, want 2 (a usage error)", exitCode(err))
				}
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// The parsers never panic and accept only what they document.
func FuzzParseNetworkBounds(f *testing.F) {
	for _, s := range []string{"USD:1.00", "JPY:5,EUR:0.01", "20", "12.5", "100", "USD:", ":1", "1e9", "USD:1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if m, err := parseCurrencyAmounts("--x", s); err == nil {
			for cur, v := range m {
				if len(cur) != 3 || v <= 0 {
					t.Fatalf("%q gave %s %d", s, cur, v)
				}
			}
		}
		if bps, err := parsePercentBps("--x", s); err == nil && (bps < 0 || bps > 10_000) {
			t.Fatalf("%q gave %d bps", s, bps)
		}
	})
}
