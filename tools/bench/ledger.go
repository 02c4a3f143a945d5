package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/tools/internal/harness"

	"github.com/paygate/gateway/internal/domains"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// --- 7: gateway audit verify ---------------------------------------------

func scenarioVerify(b *bench) ([]row, error) {
	if b.gatewayBin == "" {
		return nil, errors.New("needs the gateway binary")
	}
	if _, err := b.bill(); err != nil {
		return nil, err
	}
	var entries, postingsN int64
	if err := b.db.QueryRowContext(b.ctx, `select (select count(*) from entries), (select count(*) from postings)`).Scan(&entries, &postingsN); err != nil {
		return nil, err
	}
	cmd, logPath, closeLog, err := b.auditVerifyCmd("audit-verify.log")
	if err != nil {
		return nil, err
	}
	defer closeLog()
	progress(b.log, "7: gateway audit verify over %d entries (%d postings), all merchants", entries, postingsN)
	pg0, pgProcs := b.pgTotalCPUMs(), len(b.pgPids())
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stopPerf := b.startPerf("7-audit-verify", cmd.Process.Pid)
	runErr := cmd.Wait()
	took := time.Since(t0)
	stopPerf()
	pgCPU := b.pgCPUAfterVerify(pg0, pgProcs)
	if b.ctx.Err() != nil {
		return nil, b.ctx.Err()
	}
	rate := float64(entries) / took.Seconds()
	r := row{Scenario: fmt.Sprintf("7  gateway audit verify, %d entries", entries), OpsPerSec: rate,
		Target: "≥ 100,000 entries/s", Measured: fmt.Sprintf("%.0f entries/s", rate), Verdict: verdict(rate >= 100_000)}
	var notes []string
	notes = append(notes, fmt.Sprintf("wall %.1f s for the whole database (every merchant)", took.Seconds()))
	if ps := cmd.ProcessState; ps != nil {
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			notes = append(notes, fmt.Sprintf("verify process CPU %.1f s, max RSS %.0f MB", cpu.Seconds(), float64(ru.Maxrss)/1024))
			if pgCPU > 0 {
				// What the verify cost in CPU, whatever else the machine
				// was doing: the figure to compare between runs on a busy
				// machine, where the wall time is not.
				notes = append(notes, fmt.Sprintf("PostgreSQL CPU %.1f s (verify + PostgreSQL %.1f s)", pgCPU/1000, cpu.Seconds()+pgCPU/1000))
			}
		}
	}
	var exit *exec.ExitError
	switch {
	case runErr == nil:
		notes = append(notes, "the journal verifies")
	case errors.As(runErr, &exit) && exit.ExitCode() == 1:
		notes = append(notes, "THE JOURNAL DOES NOT VERIFY (exit 1): "+harness.TailFile(logPath, 3))
	default:
		r.Verdict = "ERROR"
		notes = append(notes, fmt.Sprintf("audit verify failed: %v: %s", runErr, harness.TailFile(logPath, 3)))
	}
	r.Note = joinNotes(notes...)
	return []row{r}, nil
}

// pgTotalCPUMs is the CPU time so far of the bench's PostgreSQL: its
// processes' own, and, through the postmaster's cumulative children's time
// (cutime + cstime), that of every backend that has exited and been reaped:
// the verify's backends end with its connections, before they could be
// sampled.
func (b *bench) pgTotalCPUMs() float64 {
	pids := b.pgPids()
	if len(pids) == 0 {
		return 0
	}
	total := procChildrenCPUMs(pids[0]) // pgPids lists the postmaster first
	for _, p := range pids {
		total += procCPUMs(p)
	}
	return total
}

// pgCPUAfterVerify is PostgreSQL's CPU since before (pgTotalCPUMs), once
// the backends the verify opened have exited: the server has no more
// processes than the procs it had before, or two seconds have passed.
func (b *bench) pgCPUAfterVerify(before float64, procs int) float64 {
	if before == 0 {
		return 0
	}
	for deadline := time.Now().Add(2 * time.Second); len(b.pgPids()) > procs && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	return b.pgTotalCPUMs() - before
}

// procChildrenCPUMs is the CPU time of a process's reaped children
// (cutime + cstime in /proc/<pid>/stat), 0 if unknown.
func procChildrenCPUMs(pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(raw)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+2:]
	}
	f := strings.Fields(s)
	if len(f) < 15 {
		return 0
	}
	// After the name: state(0) … cutime and cstime are fields 16 and 17
	// of the line, indexes 13 and 14 here.
	cut, _ := strconv.ParseFloat(f[13], 64)
	cst, _ := strconv.ParseFloat(f[14], 64)
	return (cut + cst) * 10
}

// --- L: ledger.Append in process ------------------------------------------

// scenarioLedger measures the ledger writer without HTTP: ledger.Append in
// this process, each call one entry, against the same plain-SQL ceilings as
// scenarios 1 and 2 (measured once per run). Each row gets a fresh database.
func scenarioLedger(b *bench) ([]row, error) {
	conc := b.o.concurrency
	spread, err := b.benchLedger("L1 ledger.Append, spread (in process)", b.o.merchants, b.o.cardsPer, postings.KindCardTransferIn)
	if err != nil {
		return nil, err
	}
	ceil, err := b.ceiling("spread", func() (*runResult, error) {
		return b.ceilingSpreadTransfers(conc, b.o.merchants, b.o.cardsPer)
	})
	if err != nil {
		return nil, err
	}
	spread.CeilingOps, spread.Ratio, spread.CeilingPgCPUPerOpMs = ceil.opsPerSec, spread.OpsPerSec/ceil.opsPerSec, ceil.pgCPUPerOpMs
	spread.Note = "funding → card over the same cards as 1, no HTTP; " + spread.Note

	hot, err := b.benchLedger("L2 ledger.Append, one hot account (in process)", 1, 10_000, postings.KindCardFund)
	if err != nil {
		return nil, err
	}
	ceil, err = b.ceiling("hot", func() (*runResult, error) { return b.ceilingHot(conc, 10_000) })
	if err != nil {
		return nil, err
	}
	hot.CeilingOps, hot.Ratio, hot.CeilingPgCPUPerOpMs = ceil.opsPerSec, hot.OpsPerSec/ceil.opsPerSec, ceil.pgCPUPerOpMs
	hot.Note = "every entry debits one funding account, no HTTP; " + hot.Note
	return []row{spread, hot}, nil
}

func (b *bench) benchLedger(name string, merchantsN, cardsPer int, kind postings.Kind) (row, error) {
	u, err := b.newDatabase()
	if err != nil {
		return row{}, err
	}
	db, err := database.OpenDB(b.ctx, u, database.DBOptions{ConnsMax: 40})
	if err != nil {
		return row{}, err
	}
	defer db.Close()
	if err := database.Migrate(b.ctx, db); err != nil {
		return row{}, err
	}
	key := make([]byte, merchant.DataKeyBytes)
	_, _ = rand.Read(key)
	sealer, _ := merchant.NewSealer(key)
	l := ledger.New(db, ledger.Config{Shards: b.o.lShards, BatchWindow: b.o.lWindow, Domains: domains.All()})
	defer l.Close()
	ms := merchant.New(l, sealer)
	merchants := make([]int64, merchantsN)
	for i := range merchants {
		m, _, err := ms.CreateMerchant(b.ctx, merchant.Spec{Name: fmt.Sprintf("bench %d", i), Currencies: []string{"USD"}})
		if err != nil {
			return row{}, err
		}
		if _, err := l.Deposit(b.ctx, m.ID, "USD", depositMinor, nil); err != nil {
			return row{}, err
		}
		merchants[i] = m.ID
	}
	rngs := make([]*mrand.Rand, b.o.concurrency)
	for i := range rngs {
		rngs[i] = mrand.New(mrand.NewPCG(uint64(i), 7))
	}
	before := l.Stats()
	progress(b.log, "%s: %d clients, %s", name, b.o.concurrency, b.o.duration)
	res, err := b.drive(driveSpec{concurrency: b.o.concurrency, duration: b.o.duration, warmup: b.o.warmup, profile: name[:2],
		gateway: false,
		op: func(w, _ int) error {
			m := merchants[rngs[w].IntN(len(merchants))]
			card := fmt.Sprintf("crd_%d_%d", m, rngs[w].IntN(cardsPer))
			_, err := l.Append(b.ctx, ledger.Batch{Merchant: m, Entries: []postings.Entry{{
				Merchant: m, Kind: kind, Refs: postings.Refs{CardNo: card},
				Postings: []postings.Posting{{
					Source:      postings.MerchantAccount(m, postings.AccountFunding, "USD"),
					Destination: postings.CardAccount(m, postings.AccountCardAvailable, "USD", card),
					Amount:      1, Currency: "USD",
				}},
			}}})
			return err
		}})
	if err != nil {
		return row{}, err
	}
	after := l.Stats()
	batching := float64(after.Commands-before.Commands) / float64(max(1, after.Batches-before.Batches))
	shards := "default shards"
	if b.o.lShards > 0 {
		shards = fmt.Sprintf("%d shards", b.o.lShards)
	}
	if b.o.lWindow > 0 {
		shards += fmt.Sprintf(", batch window %s", b.o.lWindow)
	}
	return row{Scenario: name, OpsPerSec: res.opsPerSec, P50Ms: res.p50(), P99Ms: res.p99(), Ops: res.n, Errors: res.errs,
		PgCPUPerOpMs: res.pgCPUPerOpMs, BenchCPUPerOpMs: res.benchCPUPerOpMs,
		Note: joinNotes(fmt.Sprintf("%s; %.1f commands per transaction", shards, batching), res.errorNote())}, nil
}

// auditVerifyCmd is `gateway audit verify` over the bench's database, its
// output going to logName in the bench's directory (scenario 7 and row V).
func (b *bench) auditVerifyCmd(logName string) (cmd *exec.Cmd, logPath string, closeLog func(), err error) {
	return b.gatewayCmd(logName, "audit", "verify")
}

// gatewayCmd is a gateway command (args) on the bench's database, its
// output appended to b.dir/logName.
func (b *bench) gatewayCmd(logName string, args ...string) (cmd *exec.Cmd, logPath string, closeLog func(), err error) {
	logPath = filepath.Join(b.dir, logName)
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, "", nil, err
	}
	cmd = exec.CommandContext(b.ctx, b.gatewayBin, args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+b.dbURL, "GATEWAY_DATA_KEY="+b.dataKey,
		"GATEWAY_DATA_DIR="+filepath.Join(b.dir, "verify"))
	cmd.Stdout, cmd.Stderr = f, f
	return cmd, logPath, func() { f.Close() }, nil //nolint:errcheck
}
