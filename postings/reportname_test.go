package postings

import (
	"testing"
	"time"
)

// Report files are named like the bill's, with the zone always and the
// currency when narrowed; the totals file sits beside the report.
func TestReportFileName(t *testing.T) {
	d1 := time.Date(2031, 3, 1, 0, 0, 0, 0, time.UTC)
	d2 := time.Date(2031, 3, 31, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		zone, cur string
		totals    bool
		want      string
	}{
		{"", "", false, "balance_SH1_2031-03-01_2031-03-31_UTC.csv"},
		{"UTC", "", true, "balance-totals_SH1_2031-03-01_2031-03-31_UTC.csv"},
		{"Europe/Paris", "KWD", false, "balance_SH1_2031-03-01_2031-03-31_Europe-Paris_KWD.csv"},
		{"America/Argentina/Buenos_Aires", "", true, "balance-totals_SH1_2031-03-01_2031-03-31_America-Argentina-Buenos_Aires.csv"},
	} {
		if got := ReportFileName("balance", "SH1", d1, d2, tc.zone, tc.cur, tc.totals); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc, got, tc.want)
		}
	}
}
