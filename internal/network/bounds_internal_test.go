package network

import (
	"math"
	"testing"

	"github.com/paygate/gateway/postings"
)

// The over-capture comparison is exact at the edges of int64: no product
// overflows, and the bound is never rounded in the clearing's favour.
func TestOverCapturedEdges(t *testing.T) {
	for _, tt := range []struct {
		amount, authorized, bps int64
		want                    bool
	}{
		{1, 1, 0, false},
		{2, 1, 0, true},
		{1, 1, 2000, false},
		{2, 1, 2000, true}, // 1.2 minor units allow 1
		{6, 5, 2000, false},
		{7, 5, 2000, true},
		{37_49, 33_33, 1250, false}, // 37.49625
		{37_50, 33_33, 1250, true},
		{postings.AmountMinorMax, postings.AmountMinorMax, 0, false},
		{postings.AmountMinorMax, postings.AmountMinorMax - 1, 0, true},
		{math.MaxInt64, math.MaxInt64, 0, false},
		{math.MaxInt64, math.MaxInt64 / 2, OverCaptureBpsMax, true}, // 2 × (MaxInt64/2) = MaxInt64 − 1
		{math.MaxInt64 - 1, math.MaxInt64 / 2, OverCaptureBpsMax, false},
		{math.MaxInt64, 1, OverCaptureBpsMax, true},
	} {
		if got := overCaptured(tt.amount, tt.authorized, tt.bps); got != tt.want {
			t.Errorf("overCaptured(%d, %d, %d) = %v, want %v", tt.amount, tt.authorized, tt.bps, got, tt.want)
		}
	}
}

// The defaults, and applying them twice changes nothing (the ledger keeps
// the result and Bounds applies them again).
func TestNetworkBoundsDefaults(t *testing.T) {
	for _, tt := range []struct {
		in       Bounds
		usd, bps int64
	}{
		{Bounds{}, NetworkMessageMaxUSD, OverCaptureBpsDefault},
		{Bounds{OverCaptureBps: NoOverCapture}, NetworkMessageMaxUSD, NoOverCapture},
		{Bounds{OverCaptureBps: -7}, NetworkMessageMaxUSD, NoOverCapture},
		{Bounds{OverCaptureBps: 1_000_000}, NetworkMessageMaxUSD, OverCaptureBpsMax},
		{Bounds{MessageMax: map[string]int64{"USD": 5, "EUR": -1, "JPY": math.MaxInt64}}, 5, OverCaptureBpsDefault},
	} {
		once := tt.in.withDefaults()
		twice := once.withDefaults()
		if once.MessageMax["USD"] != tt.usd || once.OverCaptureBps != tt.bps ||
			twice.MessageMax["USD"] != tt.usd || twice.OverCaptureBps != tt.bps || len(twice.MessageMax) != len(once.MessageMax) {
			t.Errorf("%+v: once %+v twice %+v, want USD %d bps %d", tt.in, once, twice, tt.usd, tt.bps)
		}
		if _, ok := once.MessageMax["EUR"]; ok {
			t.Errorf("%+v: a negative bound was kept", tt.in)
		}
		if v, ok := once.MessageMax["JPY"]; ok && v > postings.AmountMinorMax {
			t.Errorf("%+v: a bound above the largest amount was kept: %d", tt.in, v)
		}
	}
	if got := (&Bounds{OverCaptureBps: NoOverCapture}).overCaptureBps(); got != 0 {
		t.Errorf("no over-capture is %d bps", got)
	}
}

func TestFormatBps(t *testing.T) {
	for bps, want := range map[int64]string{0: "0", 2000: "20", 1250: "12.5", 1205: "12.05", 10_000: "100", 1: "0.01", 10: "0.1"} {
		if got := formatBps(bps); got != want {
			t.Errorf("formatBps(%d) = %q, want %q", bps, got, want)
		}
	}
}
