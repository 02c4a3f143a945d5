package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Rounds (-rounds N, issue 20): on this shared machine one run of a
// scenario moves by ±10–15 % from one minute to the next, ceilings included,
// so a verdict taken on one run can pass or miss by chance. With N rounds,
// every selected scenario runs N times, round after round (1, 2, …, 1, 2,
// …), and each round measures its ceilings again, so that a scenario and its
// ceiling stay side by side in time. The summary prints, per row, the median
// and the spread (min–max) of its throughput and ratio, and the verdict on
// the median.
//
// Every verdict is a threshold on one figure that grows (or shrinks)
// monotonically with it, so for an odd N the verdict on the median figure
// is the verdict of the majority of rounds; that is how it is computed,
// which keeps the scenarios' own checks the one definition of each target.
// For an even N a tie is a MISS: the median then lies between two rounds
// that disagree.

// runRounds runs the selected scenarios o.rounds times and returns every
// row, each round's named "(round k)" when there is more than one.
func runRounds(ctx context.Context, b *bench, o options, stderr io.Writer) ([]row, error) {
	var out []row
	rounds := max(1, o.rounds)
	for round := 1; round <= rounds; round++ {
		// A ceiling per round, next to its scenario in time.
		b.ceilings = nil
		b.round = round
		for _, sc := range scenarios() {
			if !o.selected(sc.id) {
				continue
			}
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			if rounds > 1 {
				progress(stderr, "round %d of %d, scenario %s: %s", round, rounds, sc.id, sc.title)
			} else {
				progress(stderr, "scenario %s: %s", sc.id, sc.title)
			}
			rows, err := sc.run(b)
			if err != nil {
				if ctx.Err() != nil {
					return out, ctx.Err()
				}
				// One broken scenario does not hide the others.
				progress(stderr, "scenario %s failed: %v", sc.id, err)
				rows = []row{{Scenario: sc.id + " " + sc.title, Verdict: "ERROR", Note: err.Error()}}
			}
			for i := range rows {
				if rows[i].Load == "" {
					rows[i].Load = loadavg()
				}
				if rounds > 1 {
					rows[i].Round = round
					rows[i].Scenario += fmt.Sprintf(" (round %d)", round)
				}
			}
			out = append(out, rows...)
			if b.gw != nil {
				if err := b.gw.Exited(); err != nil {
					return out, fmt.Errorf("after scenario %s: %w", sc.id, err)
				}
			}
		}
	}
	return out, nil
}

// summaryRow is one row of the rounds' summary.
type summaryRow struct {
	Scenario    string   `json:"scenario"`
	Rounds      int      `json:"rounds"`
	OpsMedian   float64  `json:"opsPerSecMedian,omitempty"`
	OpsMin      float64  `json:"opsPerSecMin,omitempty"`
	OpsMax      float64  `json:"opsPerSecMax,omitempty"`
	RatioMedian float64  `json:"ratioMedian,omitempty"`
	RatioMin    float64  `json:"ratioMin,omitempty"`
	RatioMax    float64  `json:"ratioMax,omitempty"`
	P99Median   float64  `json:"p99MsMedian,omitempty"`
	CPUMedian   float64  `json:"gatewayPlusPostgresCpuPerOpMsMedian,omitempty"`
	Target      string   `json:"target,omitempty"`
	Measured    []string `json:"measured,omitempty"` // each round's, in order
	Verdicts    []string `json:"verdicts,omitempty"` // each round's, in order
	Verdict     string   `json:"verdict,omitempty"`  // on the median
}

// rowKey is what identifies a row across rounds: its first word ("1",
// "2a", "S16"), since the rest may carry the round's own counts.
func rowKey(r row) string {
	if f := strings.Fields(r.Scenario); len(f) > 0 {
		return f[0]
	}
	return r.Scenario
}

// median of a non-empty list (the mean of the two middle values when its
// length is even).
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// verdictOnMedian is the verdict of the median round: the majority's, a tie
// (even count) being a MISS; an ERROR in any round is an ERROR.
func verdictOnMedian(verdicts []string) string {
	pass, miss := 0, 0
	for _, v := range verdicts {
		switch v {
		case "PASS":
			pass++
		case "MISS":
			miss++
		case "ERROR":
			return "ERROR"
		}
	}
	switch {
	case pass == 0 && miss == 0:
		return ""
	case pass > miss:
		return "PASS"
	default:
		return "MISS"
	}
}

// summarize folds the rows of every round into one row per scenario row,
// in the order of first appearance.
func summarize(rows []row) []summaryRow {
	var order []string
	by := map[string][]row{}
	for _, r := range rows {
		k := rowKey(r)
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], r)
	}
	out := make([]summaryRow, 0, len(order))
	for _, k := range order {
		rs := by[k]
		s := summaryRow{Scenario: strings.TrimSpace(strings.SplitN(rs[0].Scenario, " (round", 2)[0]), Rounds: len(rs)}
		var ops, ratios, p99s, cpus []float64
		for _, r := range rs {
			if r.OpsPerSec > 0 {
				ops = append(ops, r.OpsPerSec)
			}
			if r.Ratio > 0 {
				ratios = append(ratios, r.Ratio)
			}
			if r.P99Ms > 0 {
				p99s = append(p99s, r.P99Ms)
			}
			if c := r.GatewayCPUPerOpMs + r.PgCPUPerOpMs; c > 0 {
				cpus = append(cpus, c)
			}
			if r.Target != "" {
				s.Target = r.Target
			}
			s.Measured = append(s.Measured, dash(r.Measured))
			s.Verdicts = append(s.Verdicts, dash(r.Verdict))
		}
		if len(ops) > 0 {
			s.OpsMedian, s.OpsMin, s.OpsMax = median(ops), slices.Min(ops), slices.Max(ops)
		}
		if len(ratios) > 0 {
			s.RatioMedian, s.RatioMin, s.RatioMax = median(ratios), slices.Min(ratios), slices.Max(ratios)
		}
		if len(p99s) > 0 {
			s.P99Median = median(p99s)
		}
		if len(cpus) > 0 {
			s.CPUMedian = median(cpus)
		}
		s.Verdict = verdictOnMedian(s.Verdicts)
		out = append(out, s)
	}
	return out
}

// printSummary prints the rounds' summary table.
func printSummary(w io.Writer, sum []summaryRow) {
	if len(sum) == 0 {
		return
	}
	fmt.Fprintf(w, "\nsummary of %d rounds: median (min–max); the verdict is the median round's (the majority's)\n\n", sum[0].Rounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tops/s\tratio\tp99 ms\tgw+pg CPU ms/op\ttarget\tmeasured per round\tverdicts\tverdict")
	for _, s := range sum {
		ops, ratio, p99, cpu := "-", "-", "-", "-"
		if s.OpsMedian > 0 {
			ops = fmt.Sprintf("%.0f (%.0f–%.0f)", s.OpsMedian, s.OpsMin, s.OpsMax)
		}
		if s.RatioMedian > 0 {
			ratio = fmt.Sprintf("%.2f× (%.2f–%.2f)", s.RatioMedian, s.RatioMin, s.RatioMax)
		}
		if s.P99Median > 0 {
			p99 = fmtMs(s.P99Median)
		}
		if s.CPUMedian > 0 {
			cpu = fmt.Sprintf("%.3f", s.CPUMedian)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Scenario, ops, ratio, p99, cpu, dash(s.Target),
			strings.Join(s.Measured, " / "), strings.Join(s.Verdicts, " "), dash(s.Verdict))
	}
	tw.Flush()
}

// roundKey is an Idempotency-Key or network message id of worker w's i-th
// operation, unique to the round: "prefix-rR-w-i".
func (b *bench) roundKey(prefix string, w, i int) string {
	return fmt.Sprintf("%s-r%d-%d-%d", prefix, b.round, w, i)
}
