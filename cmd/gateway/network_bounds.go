package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/postings"
)

// The network bounds of serve (docs/network.md, "Bounds"; network.Bounds):
// three flags, each with the variable behind it, read like serve's other
// settings. A value serve cannot read stops it with a usage error naming
// the flag, rather than running with a bound nobody chose.

// networkBoundsFlags are the flags, registered before parsing.
type networkBoundsFlags struct {
	messageMax, overCapturePct, unmatchedRefundMax *string
}

func addNetworkBoundsFlags(e *env, fs *flag.FlagSet) *networkBoundsFlags {
	return &networkBoundsFlags{
		messageMax: fs.String("network-message-max", e.getenv("GATEWAY_NETWORK_MESSAGE_MAX"),
			"largest card-network message per currency, CUR:amount,… (default 1000000.00 USD, other currencies converted; GATEWAY_NETWORK_MESSAGE_MAX)"),
		overCapturePct: fs.String("network-over-capture-pct", envOr(e, "GATEWAY_NETWORK_OVER_CAPTURE_PCT", "20"),
			"how far a clearing may exceed its authorization, in percent, 0 to 100 with up to 2 decimals (GATEWAY_NETWORK_OVER_CAPTURE_PCT)"),
		unmatchedRefundMax: fs.String("network-unmatched-refund-max", e.getenv("GATEWAY_NETWORK_UNMATCHED_REFUND_MAX"),
			"refunds a card may receive beyond what the network captured on it, CUR:amount,… (default none; GATEWAY_NETWORK_UNMATCHED_REFUND_MAX)"),
	}
}

// bounds reads the flags' values.
func (f *networkBoundsFlags) bounds() (network.Bounds, error) {
	var b network.Bounds
	var err error
	if b.MessageMax, err = parseCurrencyAmounts("--network-message-max", *f.messageMax); err != nil {
		return b, err
	}
	if b.UnmatchedRefundMax, err = parseCurrencyAmounts("--network-unmatched-refund-max", *f.unmatchedRefundMax); err != nil {
		return b, err
	}
	if b.OverCaptureBps, err = parsePercentBps("--network-over-capture-pct", *f.overCapturePct); err != nil {
		return b, err
	}
	if b.OverCaptureBps == 0 {
		b.OverCaptureBps = network.NoOverCapture // 0 % is a choice, not "the default"
	}
	return b, nil
}

// parseCurrencyAmounts reads "USD:1000000.00,JPY:150000000": a positive
// amount per currency, with at most the currency's decimals, into minor
// units. Empty is no entry.
func parseCurrencyAmounts(flagName, s string) (map[string]int64, error) {
	out := map[string]int64{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, item := range strings.Split(s, ",") {
		code, amount, ok := strings.Cut(strings.TrimSpace(item), ":")
		if !ok {
			return nil, usageError(fmt.Sprintf("%s: %q is not CUR:amount", flagName, item))
		}
		cur, err := postings.LookupCurrency(code)
		if err != nil {
			return nil, usageError(fmt.Sprintf("%s: %q is not a supported ISO 4217 currency code", flagName, code))
		}
		if _, dup := out[cur.Code]; dup {
			return nil, usageError(fmt.Sprintf("%s: %s appears twice", flagName, cur.Code))
		}
		minor, err := postings.ParseAmount(amount, cur)
		if err != nil {
			return nil, usageError(fmt.Sprintf("%s: %s %s: %s", flagName, cur.Code, amount, postings.AsError(err).Message))
		}
		out[cur.Code] = minor
	}
	return out, nil
}

// parsePercentBps reads a percentage from 0 to 100 with at most two
// decimals ("20", "12.5") into basis points.
func parsePercentBps(flagName, s string) (int64, error) {
	bad := usageError(fmt.Sprintf("%s: %q is not a percentage from 0 to 100 with at most 2 decimals", flagName, s))
	whole, frac, hasFrac := strings.Cut(strings.TrimSpace(s), ".")
	if whole == "" || len(whole) > 3 || (hasFrac && (frac == "" || len(frac) > 2)) {
		return 0, bad
	}
	for len(frac) < 2 {
		frac += "0"
	}
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, bad
		}
	}
	bps, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil || bps > 100_00 {
		return 0, bad
	}
	return bps, nil
}
