package main

import (
	"testing"
)

func TestVerdictOnMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"PASS", "MISS", "PASS"}, "PASS"},
		{[]string{"MISS", "PASS", "MISS"}, "MISS"},
		{[]string{"PASS", "MISS"}, "MISS"}, // a tie: the median lies between them
		{[]string{"PASS", "ERROR", "PASS"}, "ERROR"},
		{[]string{"-", "-"}, ""},
		{[]string{"PASS"}, "PASS"},
	} {
		if got := verdictOnMedian(tc.in); got != tc.want {
			t.Errorf("verdictOnMedian(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{7}, 7},
		{nil, 0},
	} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// The summary groups a row's rounds by its first word, whatever the rest
// of the name carries, and keeps the order of first appearance.
func TestSummarizeGroupsRoundsOfARow(t *testing.T) {
	rows := []row{
		{Scenario: "1  transfers (round 1)", OpsPerSec: 100, Ratio: 1.0, Verdict: "PASS", Measured: "1.00×"},
		{Scenario: "7 verify, 1,000 entries (round 1)", OpsPerSec: 50, Verdict: "MISS"},
		{Scenario: "1  transfers (round 2)", OpsPerSec: 300, Ratio: 3.0, Verdict: "PASS", Measured: "3.00×"},
		{Scenario: "7 verify, 1,002 entries (round 2)", OpsPerSec: 70, Verdict: "PASS"},
		{Scenario: "1  transfers (round 3)", OpsPerSec: 200, Ratio: 0.5, Verdict: "MISS", Measured: "0.50×"},
		{Scenario: "7 verify, 1,004 entries (round 3)", OpsPerSec: 60, Verdict: "MISS"},
	}
	sum := summarize(rows)
	if len(sum) != 2 || sum[0].Scenario != "1  transfers" || sum[1].Scenario != "7 verify, 1,000 entries" {
		t.Fatalf("summary rows: %+v", sum)
	}
	s := sum[0]
	if s.Rounds != 3 || s.OpsMedian != 200 || s.OpsMin != 100 || s.OpsMax != 300 ||
		s.RatioMedian != 1.0 || s.RatioMin != 0.5 || s.RatioMax != 3.0 || s.Verdict != "PASS" {
		t.Errorf("row 1: %+v", s)
	}
	if sum[1].Verdict != "MISS" || sum[1].OpsMedian != 60 {
		t.Errorf("row 7: %+v", sum[1])
	}
}
