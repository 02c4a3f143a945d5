package postings_test

import (
	"testing"
	"time"

	"github.com/paygate/gateway/postings"
)

func TestBillFileName(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	end := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		page, size int
		want       string
	}{
		{0, 0, "bill_SH1011208043_2026-11-01_2026-11-30.csv"},
		{0, 50, "bill_SH1011208043_2026-11-01_2026-11-30.csv"}, // no page: the whole range
		{3, 50, "bill_SH1011208043_2026-11-01_2026-11-30_p3_s50.csv"},
	} {
		if got := postings.BillFileName("SH1011208043", start, end, tt.page, tt.size); got != tt.want {
			t.Errorf("page %d size %d: %q, want %q", tt.page, tt.size, got, tt.want)
		}
	}
}
