// Command bench measures the gateway against the SQL ceiling on this
// machine, in one run: it starts its own durable PostgreSQL, drives each
// scenario with concurrent clients, runs the same postings as minimal
// plain-SQL transactions at the same concurrency, and prints one table (and
// writes it as JSON for comparison between commits). `make bench` runs it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/paygate/gateway/ledger/pgcluster"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// options of a run.
type options struct {
	duration    time.Duration
	concurrency int
	only        string
	out         string
}

// row is one line of the result table.
type row struct {
	Scenario   string  `json:"scenario"`
	OpsPerSec  float64 `json:"opsPerSec"`
	P50Ms      float64 `json:"p50Ms"`
	P99Ms      float64 `json:"p99Ms"`
	CeilingOps float64 `json:"ceilingOpsPerSec,omitempty"`
	Ratio      float64 `json:"ratio,omitempty"`
	Target     string  `json:"target,omitempty"`
	Note       string  `json:"note,omitempty"`
}

// report is the JSON file.
type report struct {
	Started     time.Time `json:"started"`
	Machine     string    `json:"machine"`
	Concurrency int       `json:"concurrency"`
	Duration    string    `json:"duration"`
	Rows        []row     `json:"rows"`
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measuring time of each run")
	fs.IntVar(&o.concurrency, "concurrency", 32, "concurrent clients")
	fs.StringVar(&o.only, "only", "", "comma-separated scenario name prefixes to run")
	fs.StringVar(&o.out, "out", "bench-results/latest.json", "where to write the JSON report")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}

	dir, err := os.MkdirTemp("", "gateway-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintln(stderr, "bench: starting a durable PostgreSQL (fsync on, synchronous commit on)")
	c, err := pgcluster.Start(ctx, pgcluster.Options{Dir: dir, Durable: true, Log: stderr,
		Settings: map[string]string{"shared_buffers": "1GB", "max_wal_size": "4GB"}})
	if err != nil {
		return err
	}
	defer c.Stop() //nolint:errcheck
	env := &benchEnv{ctx: ctx, cluster: c, o: o, log: stderr}

	rep := report{Started: time.Now().UTC(), Machine: machine(), Concurrency: o.concurrency, Duration: o.duration.String()}
	for _, sc := range scenarios() {
		if !selected(o.only, sc.name) {
			continue
		}
		fmt.Fprintf(stderr, "bench: %s …\n", sc.name)
		rows, err := sc.run(env)
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		rep.Rows = append(rep.Rows, rows...)
	}
	printTable(stdout, &rep)
	if o.out != "" {
		if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
			return err
		}
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(o.out, append(b, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nwritten to %s\n", o.out)
	}
	return nil
}

func selected(only, name string) bool {
	if only == "" {
		return true
	}
	for _, p := range strings.Split(only, ",") {
		if strings.HasPrefix(name, strings.TrimSpace(p)) {
			return true
		}
	}
	return false
}

func printTable(w io.Writer, rep *report) {
	fmt.Fprintf(w, "machine: %s; %d clients; %s per run\n", rep.Machine, rep.Concurrency, rep.Duration)
	fmt.Fprintln(w, "entries/s: committed ledger entries per second; plain SQL: the same postings as minimal")
	fmt.Fprintln(w, "SQL transactions at the same concurrency (the ceiling); ratio = entries/s ÷ plain SQL.")
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tentries/s\tp50 ms\tp99 ms\tplain SQL entries/s\tratio\ttarget\t")
	for _, r := range rep.Rows {
		ceiling, ratio := "-", "-"
		if r.CeilingOps > 0 {
			ceiling = fmt.Sprintf("%.0f", r.CeilingOps)
			ratio = fmt.Sprintf("%.2f×", r.Ratio)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.2f\t%.2f\t%s\t%s\t%s\t\n", r.Scenario, r.OpsPerSec, r.P50Ms, r.P99Ms, ceiling, ratio, r.Target)
	}
	tw.Flush()
	for _, r := range rep.Rows {
		if r.Note != "" {
			fmt.Fprintf(w, "  %s: %s\n", r.Scenario, r.Note)
		}
	}
}

func machine() string {
	host, _ := os.Hostname()
	cpu := "?"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		n := strings.Count(string(b), "\nprocessor")
		if strings.HasPrefix(string(b), "processor") {
			n++
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "model name") {
				cpu = fmt.Sprintf("%d × %s", n, strings.TrimSpace(strings.SplitN(line, ":", 2)[1]))
				break
			}
		}
	}
	return host + ", " + cpu
}

// latencies summarises a sample.
type latencies []time.Duration

func (l latencies) percentile(p float64) float64 {
	if len(l) == 0 {
		return 0
	}
	s := append(latencies(nil), l...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(p * float64(len(s)-1))
	return float64(s[i].Microseconds()) / 1000
}
