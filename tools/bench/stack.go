package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/domains"
	"github.com/paygate/gateway/internal/fx"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgcluster"
	"github.com/paygate/gateway/tools/internal/harness"
)

// bench is one run: the PostgreSQL cluster, the gateway under test, the
// ledger library on the gateway's database (for setup), and what the
// scenarios prepared so far.
type bench struct {
	// round is the round being run (rounds.go), from 1. Every key and
	// message id a scenario sends carries it (roundKey): a key sent again
	// in a later round would be answered from the idempotency store, doing
	// none of the work the round measures.
	round   int
	ctx     context.Context
	o       options
	log     io.Writer
	dir     string // short, under /tmp: the unix socket path is limited
	cluster *pgcluster.Cluster
	dbURL   string
	dataKey string // hex
	db      *bun.DB
	l       *ledger.Ledger
	ms      *merchant.Service // the merchants on l
	pg      *harness.Postgres
	cards   *cards.Service   // the card domain on l
	network *network.Service // the network side on l
	gw      *gateway
	dbSeq   int

	// Prepared on first use (setup.go).
	spreadSet   *spreadSetup
	hotSet      *merchantSetup
	billSet     *billSetup
	hotCardsMu  sync.Mutex
	hotCards    []string
	perfRunning bool
	ceilings    map[string]*runResult
	gatewayBin  string
	pgStat      bool
	pgCPUMu     sync.Mutex
	pgCPUSeen   map[int]float64 // pid → CPU ms when last seen

	spreadLoadSet *spreadLoads // scenario S's merchants (spread.go)
	// pgDataDirs, when set, are the servers whose CPU pgCPUMs counts
	// instead of the cluster's (scenario S: the primary and its standby).
	pgDataDirs []string
}

func newBench(ctx context.Context, o options, log io.Writer) (_ *bench, err error) {
	dir, err := os.MkdirTemp("/tmp", "gwb-")
	if err != nil {
		return nil, err
	}
	// Traversable, so that PostgreSQL (the postgres user, when this runs as
	// root) keeps its cluster here rather than in a fallback under /var/tmp:
	// one RemoveAll then cleans up everything. What is secret inside (the
	// gateway's TLS key) is created private.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	b := &bench{ctx: ctx, o: o, log: log, dir: dir}
	defer func() {
		if err != nil {
			b.close()
		}
	}()
	progress(log, "working directory %s", dir)
	key := make([]byte, merchant.DataKeyBytes)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	b.dataKey = hex.EncodeToString(key)

	// Build first: it is the step most likely to fail (the tree may be in
	// the middle of someone's change), and it needs no database.
	bin := o.gatewayBin
	if bin == "" && o.needsGateway() {
		bin = filepath.Join(dir, "gateway")
		progress(log, "building the gateway: go build -o %s ./cmd/gateway", bin)
		if err := harness.Build(ctx, bin, log); err != nil {
			return nil, err
		}
	}

	progress(log, "starting a durable PostgreSQL (fsync on, synchronous_commit on)")
	settings := map[string]string{"shared_buffers": "1GB", "max_wal_size": "4GB", "checkpoint_timeout": "15min"}
	if o.perfDir != "" && pgStatStatementsAvailable() {
		// With -perf, each profile also gets the statements PostgreSQL spent
		// its time on (nested ones too: trigger bodies).
		settings["shared_preload_libraries"] = "pg_stat_statements"
		settings["pg_stat_statements.track"] = "all"
		settings["pg_stat_statements.track_planning"] = "on"
		b.pgStat = true
	}
	if o.autoExplain != "" {
		// Which plan each statement really ran, and how many rows and
		// buffers it touched: how the whole-table scans of young generic
		// plans were found (docs/performance.md). Without timing, so that
		// the figures stay close to a run without it.
		libs := "auto_explain"
		if b.pgStat {
			libs = "pg_stat_statements,auto_explain"
		}
		settings["shared_preload_libraries"] = libs
		settings["auto_explain.log_min_duration"] = o.autoExplain
		settings["auto_explain.log_analyze"] = "on"
		settings["auto_explain.log_buffers"] = "on"
		settings["auto_explain.log_timing"] = "off"
		settings["auto_explain.log_nested_statements"] = "on"
		settings["logging_collector"] = "on"
		settings["log_directory"] = "log" // in the data directory, which the server's user owns
		progress(log, "auto_explain: plans of statements slower than %s go to %s", o.autoExplain, filepath.Join(dir, "pg", "data", "log"))
	}
	b.pg, err = harness.StartPostgres(ctx, pgcluster.Options{Dir: filepath.Join(dir, "pg"), Durable: true, Log: log, Settings: settings})
	if err != nil {
		return nil, err
	}
	b.cluster = b.pg.Cluster()
	if err := b.cluster.CreateDatabase(ctx, "gateway"); err != nil {
		return nil, err
	}
	b.dbURL = b.cluster.URL("gateway")
	b.db, err = database.OpenDB(ctx, b.dbURL, database.DBOptions{ConnsMax: 80})
	if err != nil {
		return nil, err
	}
	if err := database.Migrate(ctx, b.db); err != nil {
		return nil, err
	}
	if b.pgStat {
		if _, err := b.db.ExecContext(ctx, "create extension if not exists pg_stat_statements"); err != nil {
			return nil, err
		}
	}
	sealer, err := merchant.NewSealer(key)
	if err != nil {
		return nil, err
	}
	b.l = ledger.New(b.db, ledger.Config{Domains: domains.All()})
	b.ms = merchant.New(b.l, sealer)
	rates := fx.New(b.l, 0)
	b.cards = cards.New(b.l, rates, b.ms)
	b.network = network.New(b.l, b.cards, rates, network.Config{})

	if bin != "" {
		b.gatewayBin = bin
		b.gw, err = startGateway(ctx, bin, b, log)
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// needsGateway: every scenario but the in-process ledger rows drives it
// (S: spread.go; 8: the filtered bill; U: sanctions_load.go).
func (o *options) needsGateway() bool {
	for _, id := range []string{"1", "2", "3", "4", "5", "6", "7", "8", "C", "H", "S", "U"} {
		if o.selected(id) {
			return true
		}
	}
	return false
}

func (b *bench) close() {
	if b.gw != nil {
		b.gw.stop()
	}
	if b.l != nil {
		b.l.Close()
	}
	if b.db != nil {
		b.db.Close()
	}
	if b.cluster != nil {
		if err := b.cluster.Stop(); err != nil {
			progress(b.log, "stopping PostgreSQL: %v", err)
		}
	}
	if b.o.keep {
		progress(b.log, "kept %s", b.dir)
		return
	}
	if b.cluster != nil && !strings.HasPrefix(b.cluster.Dir(), b.dir+"/") {
		os.RemoveAll(b.cluster.Dir()) // a fallback outside the directory
	}
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// newDatabase creates a fresh database on the cluster (for the ceilings and
// the in-process ledger rows) and returns its URL.
func (b *bench) newDatabase() (string, error) {
	b.dbSeq++
	name := fmt.Sprintf("bench_%d", b.dbSeq)
	if err := b.cluster.CreateDatabase(b.ctx, name); err != nil {
		return "", err
	}
	return b.cluster.URL(name), nil
}

// gateway is the `gateway serve` subprocess (tools/internal/harness), with the
// sampler of its resident memory.
type gateway struct {
	*harness.Gateway
	rss         *rssSampler
	stopSampler func()
}

// rssEvery is how often the gateway's resident memory is sampled.
const rssEvery = 100 * time.Millisecond

func startGateway(ctx context.Context, bin string, b *bench, log io.Writer) (*gateway, error) {
	return startGatewayOn(ctx, bin, b, b.dbURL, "gw", "gateway.log", log)
}

// startGatewayOn starts a gateway on dbURL with its data in b.dir/data
// and its log in b.dir/logName.
// extra settings go before -gateway-env's (which win).
func startGatewayOn(ctx context.Context, bin string, b *bench, dbURL, data, logName string, log io.Writer, extra ...string) (*gateway, error) {
	tok := make([]byte, 24)
	_, _ = rand.Read(tok)
	g := &gateway{}
	hg, err := harness.NewGateway(harness.GatewayConfig{
		Bin: bin, Name: "gateway serve", DatabaseURL: dbURL,
		DataDir: filepath.Join(b.dir, data), LogPath: filepath.Join(b.dir, logName),
		DataKey: b.dataKey, InternalToken: hex.EncodeToString(tok),
		BaseEnv:      os.Environ(),
		Env:          append(append([]string(nil), extra...), b.o.gatewayEnv...), // -gateway-env: last wins
		IdleConnsMax: b.o.concurrency,
		OnStart: func(pid int) {
			g.rss = &rssSampler{pid: pid}
			g.stopSampler = g.rss.run(rssEvery)
		},
	})
	if err != nil {
		return nil, err
	}
	g.Gateway = hg
	progress(log, "starting the gateway: %s serve on %s (log: %s)", bin, hg.BaseURL(), hg.LogPath())
	if err := hg.Start(ctx); err != nil {
		g.stop()
		return nil, err
	}
	progress(log, "gateway ready (pid %d)", g.pid())
	return g, nil
}

// pid is the gateway's process id.
func (g *gateway) pid() int {
	_, pid := g.Alive()
	return pid
}

func (g *gateway) stop() {
	if g.stopSampler != nil {
		g.stopSampler()
	}
	g.Stop()
}

// cpuMs is the gateway's CPU time so far (user + system), in milliseconds.
func (g *gateway) cpuMs() float64 {
	return procCPUMs(g.pid())
}

// procCPUMs reads utime + stime of /proc/<pid>/stat (clock ticks of 10 ms,
// the value of USER_HZ on Linux).
func procCPUMs(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	// The command name is in parentheses and may hold spaces.
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+2:]
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0
	}
	// After the name: state(0) … utime is field 14 of the line, index 11 here.
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) * 10
}

// rssSampler samples VmRSS of a process.
type rssSampler struct {
	pid   int
	mu    sync.Mutex
	maxMB float64
	winMB float64
}

func (s *rssSampler) run(every time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if mb, ok := vmRSSMB(s.pid); ok {
				s.mu.Lock()
				s.maxMB = max(s.maxMB, mb)
				s.winMB = max(s.winMB, mb)
				s.mu.Unlock()
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); wg.Wait() }) }
}

func (s *rssSampler) max() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxMB
}

func (s *rssSampler) resetWindow() {
	s.mu.Lock()
	s.winMB = 0
	s.mu.Unlock()
}

func (s *rssSampler) windowMax() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.winMB
}

func vmRSSMB(pid int) (float64, bool) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "VmRSS:") {
			var kb float64
			if _, err := fmt.Sscanf(strings.TrimSpace(line[len("VmRSS:"):]), "%f kB", &kb); err == nil {
				return kb / 1024, true
			}
		}
	}
	return 0, false
}

// startPerf records a perf profile (with call graphs) of this run's
// processes (the bench, the gateway, PostgreSQL) into
// -perf DIR/<name>.data until the returned function is called. The gateway
// is built with symbols, so `perf report -i …` names its Go functions.
func (b *bench) startPerf(name string, extraPids ...int) (stop func()) {
	if b.o.perfDir == "" || b.perfRunning {
		return func() {}
	}
	if err := os.MkdirAll(b.o.perfDir, 0o755); err != nil {
		progress(b.log, "perf: %v", err)
		return func() {}
	}
	name = strings.Map(func(r rune) rune {
		if r == ' ' || r == '/' || r == ',' {
			return '-'
		}
		return r
	}, name)
	out := filepath.Join(b.o.perfDir, name+".data")
	if b.pgStat {
		_, _ = b.db.ExecContext(b.ctx, "select pg_stat_statements_reset()")
	}
	// Only this run's processes: other work on the machine (other
	// PostgreSQL clusters, compilers) stays out of the profile.
	pids := []string{strconv.Itoa(os.Getpid())}
	if b.gw != nil {
		pids = append(pids, strconv.Itoa(b.gw.pid()))
	}
	for _, p := range append(b.pgPids(), extraPids...) {
		pids = append(pids, strconv.Itoa(p))
	}
	cmd := exec.Command("perf", "record", "-g", "-F", "999", "-o", out, "-p", strings.Join(pids, ","))
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		progress(b.log, "perf: %v", err)
		return func() {}
	}
	b.perfRunning = true
	return func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		if err := cmd.Wait(); err != nil && !errors.Is(err, context.Canceled) {
			if s := strings.TrimSpace(stderr.String()); s != "" && !strings.Contains(s, "Captured and wrote") {
				progress(b.log, "perf %s: %v: %s", name, err, s)
			}
		}
		b.perfRunning = false
		progress(b.log, "perf profile written to %s", out)
		if b.pgStat {
			b.dumpPgStat(filepath.Join(b.o.perfDir, name+".pgstat.txt"))
		}
	}
}

// pgStatStatementsAvailable: is the contrib module installed next to the
// server binaries?
func pgStatStatementsAvailable() bool {
	bin, err := pgcluster.FindBinaries()
	if err != nil {
		return false
	}
	real, err := filepath.EvalSymlinks(bin.Postgres)
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join(filepath.Dir(filepath.Dir(real)), "lib", "pg_stat_statements.so"))
	return err == nil
}

// dumpPgStat writes the statements of the gateway's database by total time.
func (b *bench) dumpPgStat(path string) {
	rows, err := b.db.QueryContext(b.ctx, `
		select calls, round(total_plan_time::numeric, 1), round(total_exec_time::numeric, 1),
		       round(mean_exec_time::numeric, 3), rows, regexp_replace(left(query, 300), '\s+', ' ', 'g')
		from pg_stat_statements
		where dbid = (select oid from pg_database where datname = current_database())
		order by total_plan_time + total_exec_time desc limit 40`)
	if err != nil {
		progress(b.log, "pg_stat_statements: %v", err)
		return
	}
	defer rows.Close()
	var buf bytes.Buffer
	// Totals first: how much of the statements' time went to planning.
	var plan, exec float64
	_ = b.db.QueryRowContext(b.ctx, `
		select coalesce(sum(total_plan_time), 0), coalesce(sum(total_exec_time), 0) from pg_stat_statements
		where dbid = (select oid from pg_database where datname = current_database()) and toplevel`).Scan(&plan, &exec)
	fmt.Fprintf(&buf, "top-level statements: planning %.0f ms, execution %.0f ms (nested statements such as foreign-key checks are inside execution)\n\n", plan, exec)
	fmt.Fprintf(&buf, "%8s %10s %10s %9s %9s  %s\n", "calls", "plan ms", "exec ms", "mean ms", "rows", "query")
	for rows.Next() {
		var calls, nrows int64
		var planMs, total, mean float64
		var q string
		if err := rows.Scan(&calls, &planMs, &total, &mean, &nrows, &q); err != nil {
			progress(b.log, "pg_stat_statements: %v", err)
			return
		}
		fmt.Fprintf(&buf, "%8d %10.1f %10.1f %9.3f %9d  %s\n", calls, planMs, total, mean, nrows, q)
	}
	_ = os.WriteFile(path, buf.Bytes(), 0o644)
}

// sleepCtx sleeps d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// pgPids are the PostgreSQL server's processes: the postmaster and every
// process it started (backends, WAL writer, checkpointer, …).
func (b *bench) pgPids() []int {
	if b.pgDataDirs != nil {
		var pids []int
		for _, d := range b.pgDataDirs {
			pids = append(pids, pgPidsOf(d)...)
		}
		return pids
	}
	if b.cluster == nil {
		return nil
	}
	return pgPidsOf(filepath.Join(b.cluster.Dir(), "data"))
}

// pgPidsOf are the processes of the server whose data directory is dataDir.
func pgPidsOf(dataDir string) []int {
	raw, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return nil
	}
	pm, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(raw), "\n", 2)[0]))
	if err != nil {
		return nil
	}
	pids := []int{pm}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == pm {
			continue
		}
		if procPPid(pid) == pm {
			pids = append(pids, pid)
		}
	}
	return pids
}

// pgCPUMs is the CPU time so far of the PostgreSQL server's processes. A
// backend that exited (a closed connection) keeps counting with the CPU it
// had when last seen, so that the total never goes back.
func (b *bench) pgCPUMs() float64 {
	b.pgCPUMu.Lock()
	defer b.pgCPUMu.Unlock()
	if b.pgCPUSeen == nil {
		b.pgCPUSeen = map[int]float64{}
	}
	for _, p := range b.pgPids() {
		if ms := procCPUMs(p); ms > b.pgCPUSeen[p] {
			b.pgCPUSeen[p] = ms
		}
	}
	total := 0.0
	for _, ms := range b.pgCPUSeen {
		total += ms
	}
	return total
}

// procPPid is a process's parent, 0 if unknown.
func procPPid(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+2:]
	}
	f := strings.Fields(s)
	if len(f) < 2 {
		return 0
	}
	p, _ := strconv.Atoi(f[1])
	return p
}

// ledgerStats are the gateway's ledger writer counters (GET /metrics).
type ledgerStats struct {
	batches, commands, splits, retries float64
}

func (g *gateway) ledgerStats(ctx context.Context) (ledgerStats, bool) {
	var st ledgerStats
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.InternalURL()+"/metrics", nil)
	if err != nil {
		return st, false
	}
	resp, err := g.HTTPClient().Do(req)
	if err != nil {
		return st, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, resp.Body) //nolint:errcheck
		return st, false
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	found := false
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		// Over cells each cell's writer is a series of its own
		// ({cell="a1"}): the gateway's figure is their sum.
		name, _, _ := strings.Cut(f[0], "{")
		switch name {
		case "gateway_ledger_batches_total":
			st.batches, found = st.batches+v, true
		case "gateway_ledger_commands_total":
			st.commands += v
		case "gateway_ledger_splits_total":
			st.splits += v
		case "gateway_ledger_retries_total":
			st.retries += v
		}
	}
	return st, found
}

// logProblems counts the gateway log's WARN and ERROR lines by message,
// and keeps the first line of each.
func (g *gateway) logProblems() (map[string]int, map[string]string) {
	out, first := map[string]int{}, map[string]string{}
	f, err := os.Open(g.LogPath())
	if err != nil {
		return out, first
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(`"level":"WARN"`)) && !bytes.Contains(line, []byte(`"level":"ERROR"`)) {
			continue
		}
		var e struct {
			Level string `json:"level"`
			Msg   string `json:"msg"`
		}
		if json.Unmarshal(line, &e) == nil {
			k := e.Level + " " + e.Msg
			if out[k] == 0 {
				first[k] = string(line[:min(len(line), 400)])
			}
			out[k]++
		}
	}
	return out, first
}
