package reconcile

import (
	"strings"
	"testing"
	"time"
)

// An entry another file accounted for names that file, and asks the
// question of its kind: a refund is not "billed twice".
func TestClaimedDetailAsksTheKindsQuestion(t *testing.T) {
	for kind, want := range map[string]string{
		KindCardClearing:   "billed twice?",
		KindNetworkRefund:  "refunded twice?",
		KindRailRemittance: "reported twice?",
		KindBankDeposit:    "credited twice?",
	} {
		c := Claim{Line: 7, Run: Run{Kind: kind, FileName: "day.csv", FileSHA256: strings.Repeat("ab", 32), Actor: "fin.ops",
			RecordedAt: time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)}}
		got := claimedDetail(c)
		if !strings.HasSuffix(got, ": "+want) || !strings.Contains(got, "already reconciled by day.csv (sha256 abababababababab…), line 7, recorded 2026-11-27T09:00:00Z by fin.ops") {
			t.Errorf("%s: %q, want it to end %q", kind, got, want)
		}
	}
	if len(twiceQuestion) != 4 {
		t.Errorf("twiceQuestion has %d kinds, want the 4 reconciliations'", len(twiceQuestion))
	}
}
