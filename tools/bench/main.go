// Command bench measures the gateway against the SQL ceiling on this
// machine, in one run (`make bench`). It starts its own durable PostgreSQL
// (fsync on) and the real gateway binary (`gateway serve` as a subprocess),
// prepares merchants, cards, deposits and a million journal entries through
// the ledger library (not measured), drives every scenario over real HTTPS
// with concurrent keep-alive clients, measures the same postings written by
// minimal plain-SQL transactions at the same concurrency (the ceiling), and
// prints one table, also written as JSON for comparison between commits.
// Progress goes to stderr. docs/performance.md explains every row.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
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
	duration     time.Duration // measuring time of each timed run
	warmup       time.Duration
	concurrency  int
	merchants    int // scenario 1: merchants …
	cardsPer     int // … with this many cards each
	entries      int // the bill merchant's journal (scenarios 5 and 7)
	backlog      int // scenario 6
	subjects     int // scenario 6: cards the backlog's events are about
	drainMax     time.Duration
	billConc     int
	only         string
	skip         string
	out          string
	gatewayBin   string
	keep         bool
	perfDir      string
	autoExplain  string
	ledgerRows   bool
	internalWait time.Duration
	cpuProfile   string
	billCallers  int
	authLowConc  int
	lShards      int
	lWindow      time.Duration
	gatewayEnv   envList
	rounds       int // rounds.go
}

// envList is a repeatable NAME=VALUE flag.
type envList []string

func (e *envList) String() string { return strings.Join(*e, " ") }

func (e *envList) Set(v string) error {
	if i := strings.IndexByte(v, '='); i <= 0 {
		return fmt.Errorf("%q is not NAME=VALUE", v)
	}
	*e = append(*e, v)
	return nil
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
	Measured   string  `json:"measured,omitempty"` // the figure the target is about
	Verdict    string  `json:"verdict,omitempty"`  // PASS, MISS or n/a
	Ops        int64   `json:"ops,omitempty"`
	Errors     int64   `json:"errors,omitempty"`
	// GatewayCPUPerOpMs is the gateway process's CPU time (user + system)
	// per operation during the run, when it was driven over HTTPS.
	GatewayCPUPerOpMs float64 `json:"gatewayCpuPerOpMs,omitempty"`
	PgCPUPerOpMs      float64 `json:"postgresCpuPerOpMs,omitempty"`
	BenchCPUPerOpMs   float64 `json:"benchCpuPerOpMs,omitempty"`
	// CeilingPgCPUPerOpMs: PostgreSQL's CPU per operation of the ceiling.
	CeilingPgCPUPerOpMs float64 `json:"ceilingPostgresCpuPerOpMs,omitempty"`
	CeilingP50Ms        float64 `json:"ceilingP50Ms,omitempty"`
	CeilingP99Ms        float64 `json:"ceilingP99Ms,omitempty"`
	MaxRSSMB            float64 `json:"gatewayMaxRssMB,omitempty"`
	// GatewayBatching: commands per ledger transaction in the gateway
	// during the run (its /metrics), with the batches split or retried.
	GatewayBatching float64 `json:"gatewayCommandsPerTransaction,omitempty"`
	GatewaySplits   float64 `json:"gatewayBatchesSplit,omitempty"`
	GatewayRetries  float64 `json:"gatewayBatchesRetried,omitempty"`
	Load            string  `json:"load,omitempty"` // /proc/loadavg at the end of the run
	Note            string  `json:"note,omitempty"`

	Round int `json:"round,omitempty"` // with -rounds N > 1 (rounds.go)
}

// report is the JSON file.
type report struct {
	Started     time.Time         `json:"started"`
	Finished    time.Time         `json:"finished"`
	Commit      string            `json:"commit,omitempty"`
	Machine     string            `json:"machine"`
	GoVersion   string            `json:"goVersion"`
	LoadStart   string            `json:"loadStart"`
	LoadEnd     string            `json:"loadEnd"`
	Concurrency int               `json:"concurrency"`
	Duration    string            `json:"duration"`
	Settings    map[string]string `json:"settings"`
	Rows        []row             `json:"rows"`
	// GatewayLogProblems counts the gateway's WARN and ERROR log lines by
	// message over the whole run.
	GatewayLogProblems map[string]int `json:"gatewayLogProblems,omitempty"`
	// GatewayLogFirst is the first such line of each message.
	GatewayLogFirst map[string]string `json:"gatewayLogFirst,omitempty"`
	// Summary: with -rounds N > 1, the median and spread of each row.
	Summary []summaryRow `json:"summary,omitempty"`
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.DurationVar(&o.duration, "duration", 8*time.Second, "measuring time of each timed run (after the warm-up)")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "warm-up before each timed run (not counted)")
	fs.IntVar(&o.concurrency, "concurrency", 32, "concurrent clients")
	fs.IntVar(&o.merchants, "merchants", 100, "scenario 1: merchants")
	fs.IntVar(&o.cardsPer, "cards-per-merchant", 100, "scenario 1: cards per merchant")
	fs.IntVar(&o.entries, "entries", 1_000_000, "journal entries of the bill merchant (scenarios 5, 7 and 8)")
	fs.IntVar(&o.backlog, "backlog", 100_000, "scenario 6: callback events in the backlog")
	fs.IntVar(&o.subjects, "backlog-subjects", 10_000, "scenario 6: cards the backlog's events are about (events of one card go in order)")
	fs.DurationVar(&o.drainMax, "drain-max", 4*time.Minute, "scenario 6: give up waiting for the backlog after this")
	fs.IntVar(&o.billCallers, "entries-callers", 64, "concurrent ledger.Append callers making the bill merchant's entries")
	fs.IntVar(&o.authLowConc, "auth-low-concurrency", 4, "scenario 3: also measure authorizations at this lower concurrency (0: not)")
	fs.IntVar(&o.billConc, "bill-concurrency", 4, "scenarios 5 and 8: concurrent clients reading bill pages")
	fs.StringVar(&o.only, "only", "", "comma-separated scenario prefixes to run (1,2,3,4,5,6,7,8,C,H,S,L,U); setup runs as needed")
	fs.StringVar(&o.skip, "skip", "", "comma-separated scenario prefixes to skip")
	fs.StringVar(&o.out, "out", "bench-results/latest.json", "where to write the JSON report (empty: nowhere)")
	fs.StringVar(&o.gatewayBin, "gateway", "", "a gateway binary to run instead of building ./cmd/gateway")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary directory (database, gateway log)")
	fs.StringVar(&o.perfDir, "perf", "", "record a system-wide `perf record -g` profile of each measured window into this directory")
	fs.StringVar(&o.autoExplain, "auto-explain", "", "log the plan, with row counts and buffers, of every statement slower than this (e.g. 1ms; 0ms: all) to pg/data/log/ in the working directory; use with -keep")
	fs.BoolVar(&o.ledgerRows, "ledger", true, "also run the in-process ledger.Append rows (L1, L2: no HTTP)")
	fs.DurationVar(&o.internalWait, "internal-wait", 3*time.Second, "how long to wait for the internal network API to answer before falling back to in-process ledger.Authorize")
	fs.IntVar(&o.lShards, "ledger-shards", 0, "rows L1, L2: ledger.Config.Shards of the in-process ledger (0: the ledger's default)")
	fs.DurationVar(&o.lWindow, "ledger-batch-window", 0, "rows L1, L2: ledger.Config.BatchWindow of the in-process ledger")
	fs.Var(&o.gatewayEnv, "gateway-env", "NAME=VALUE added to the gateway's environment, e.g. GATEWAY_LEDGER_SHARDS=2 (repeatable)")
	fs.IntVar(&o.rounds, "rounds", 1, "run every selected scenario this many times, round after round, each round with its own ceilings; print the median and spread of each row and the verdict on the median (odd N)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the bench process (its setup and the in-process ledger rows) to this file")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if o.concurrency < 1 || o.merchants < 1 || o.cardsPer < 1 || o.entries < 0 || o.backlog < 0 || o.subjects < 1 || o.rounds < 1 {
		return fmt.Errorf("bad flags")
	}

	begin := time.Now()
	rep := &report{Started: begin.UTC(), Machine: machine(), GoVersion: runtime.Version(), LoadStart: loadavg(),
		Concurrency: o.concurrency, Duration: o.duration.String(), Commit: gitCommit(),
		Settings: map[string]string{}}
	fs.VisitAll(func(f *flag.Flag) { rep.Settings[f.Name] = f.Value.String() })
	progress(stderr, "load at start: %s (other work on this machine skews every figure)", rep.LoadStart)

	b, err := newBench(ctx, o, stderr)
	if err != nil {
		return err
	}
	defer b.close()

	rep.Rows, err = runRounds(ctx, b, o, stderr)
	if err != nil {
		return err
	}
	if b.gw != nil {
		rep.Rows = append(rep.Rows, verifyAfter(b))
	}
	if b.gw != nil {
		rss := b.gw.rss.max()
		rep.Rows = append(rep.Rows, row{Scenario: "M  gateway resident memory (max)", Target: "≤ 200 MB",
			Measured: fmt.Sprintf("%.0f MB", rss), Verdict: verdict(rss > 0 && rss <= 200), MaxRSSMB: rss,
			Load: loadavg(),
			Note: fmt.Sprintf("VmRSS of `gateway serve` sampled every %s over the whole run", rssEvery)})
	}
	if b.gw != nil {
		rep.GatewayLogProblems, rep.GatewayLogFirst = b.gw.logProblems()
		for k, line := range rep.GatewayLogFirst {
			progress(stderr, "gateway log, first %q: %s", k, line)
		}
	}
	rep.Finished = time.Now().UTC()
	rep.LoadEnd = loadavg()
	if o.rounds > 1 {
		rep.Summary = summarize(rep.Rows)
	}
	printTable(stdout, rep, time.Since(begin))
	printSummary(stdout, rep.Summary)
	if o.out != "" {
		if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
			return err
		}
		buf, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(o.out, append(buf, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nwritten to %s\n", o.out)
	}
	return nil
}

func (o *options) selected(id string) bool {
	match := func(list string) bool {
		for _, p := range strings.Split(list, ",") {
			if p = strings.TrimSpace(p); p != "" && strings.HasPrefix(id, p) {
				return true
			}
		}
		return false
	}
	if id == "L" && !o.ledgerRows {
		return false
	}
	if o.skip != "" && match(o.skip) {
		return false
	}
	return o.only == "" || match(o.only)
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

func progress(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "bench %s: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func printTable(w io.Writer, rep *report, took time.Duration) {
	fmt.Fprintf(w, "machine: %s; %s; commit %s\n", rep.Machine, rep.GoVersion, rep.Commit)
	fmt.Fprintf(w, "load average at start %s, at end %s; %d clients; %s per timed run; whole run %s\n",
		rep.LoadStart, rep.LoadEnd, rep.Concurrency, rep.Duration, took.Round(time.Second))
	fmt.Fprintln(w, "ops/s and latencies: the gateway over HTTPS (keep-alive, one client per worker); ceiling: the same")
	fmt.Fprintln(w, "postings or reads as minimal plain-SQL transactions at the same concurrency, in this run; ratio = ops/s ÷ ceiling.")
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tops/s\tp50 ms\tp99 ms\tceiling ops/s\tratio\ttarget\tmeasured\tverdict")
	for _, r := range rep.Rows {
		ops, p50, p99, ceiling, ratio := "-", "-", "-", "-", "-"
		if r.OpsPerSec > 0 {
			ops = fmt.Sprintf("%.0f", r.OpsPerSec)
		}
		if r.P50Ms > 0 {
			p50, p99 = fmtMs(r.P50Ms), fmtMs(r.P99Ms)
		}
		if r.CeilingOps > 0 {
			ceiling = fmt.Sprintf("%.0f", r.CeilingOps)
			ratio = fmt.Sprintf("%.2f×", r.Ratio)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Scenario, ops, p50, p99, ceiling, ratio,
			dash(r.Target), dash(r.Measured), dash(r.Verdict))
	}
	tw.Flush()
	fmt.Fprintln(w)
	if len(rep.GatewayLogProblems) > 0 {
		keys := make([]string, 0, len(rep.GatewayLogProblems))
		for k := range rep.GatewayLogProblems {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%q × %d", k, rep.GatewayLogProblems[k]))
		}
		fmt.Fprintf(w, "gateway log: %s\n", strings.Join(parts, ", "))
	}
	for _, r := range rep.Rows {
		var parts []string
		if r.Note != "" {
			parts = append(parts, r.Note)
		}
		if r.Errors > 0 {
			parts = append(parts, fmt.Sprintf("%d failed requests (not counted)", r.Errors))
		}
		if r.GatewayCPUPerOpMs > 0 || r.PgCPUPerOpMs > 0 {
			cpu := "CPU ms/op:"
			if r.GatewayCPUPerOpMs > 0 {
				cpu += fmt.Sprintf(" gateway %.2f,", r.GatewayCPUPerOpMs)
			}
			cpu += fmt.Sprintf(" postgres %.2f, bench %.2f", r.PgCPUPerOpMs, r.BenchCPUPerOpMs)
			if r.CeilingPgCPUPerOpMs > 0 {
				cpu += fmt.Sprintf(" (ceiling: postgres %.2f)", r.CeilingPgCPUPerOpMs)
			}
			if r.CeilingP99Ms > 0 {
				cpu += fmt.Sprintf("; ceiling p50 %s ms, p99 %s ms", fmtMs(r.CeilingP50Ms), fmtMs(r.CeilingP99Ms))
			}
			parts = append(parts, cpu)
		}
		if r.GatewayBatching > 0 {
			w := fmt.Sprintf("gateway ledger %.1f commands/transaction", r.GatewayBatching)
			if r.GatewaySplits > 0 || r.GatewayRetries > 0 {
				w += fmt.Sprintf(" (%.0f batches split, %.0f retried)", r.GatewaySplits, r.GatewayRetries)
			}
			parts = append(parts, w)
		}
		if r.MaxRSSMB > 0 && !strings.HasPrefix(r.Scenario, "M") {
			parts = append(parts, fmt.Sprintf("gateway RSS ≤ %.0f MB", r.MaxRSSMB))
		}
		if r.Load != "" {
			parts = append(parts, "load "+r.Load)
		}
		if len(parts) > 0 {
			key := strings.Fields(r.Scenario)[0]
			if r.Round > 0 {
				key += fmt.Sprintf(" (round %d)", r.Round)
			}
			fmt.Fprintf(w, "  %s: %s\n", key, strings.Join(parts, "; "))
		}
	}
}

func fmtMs(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
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
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			mem = fmt.Sprintf(", %.0f GB RAM", float64(kb)/(1<<20))
		}
	}
	return host + ", " + cpu + mem
}

// loadavg is the 1-, 5- and 15-minute load average.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// gitCommit is the checked-out commit, "+uncommitted" when the tracked
// files differ from it (read only: neither command writes the index).
func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "?"
	}
	c := strings.TrimSpace(string(out))
	if err := exec.Command("git", "diff-index", "--quiet", "HEAD", "--").Run(); err != nil {
		c += "+uncommitted"
	}
	return c
}

// latencies summarises a sample.
type latencies []time.Duration

func (l latencies) sorted() latencies {
	s := append(latencies(nil), l...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s
}

// percentile of a sorted sample, in milliseconds.
func (l latencies) percentile(p float64) float64 {
	if len(l) == 0 {
		return 0
	}
	i := int(p * float64(len(l)-1))
	return float64(l[i].Microseconds()) / 1000
}
