// Command chaos is the gateway's fault-injection run (`make chaos`): it
// builds the gateway, starts a durable PostgreSQL in a temporary directory,
// and, against real `gateway serve` processes:
//
//   - crash: kills the gateway with SIGKILL during concurrent money
//     operations, restarts it, lets every client retry its unanswered
//     requests with the same Idempotency-Key, and checks that each
//     acknowledged or retried operation is in the journal exactly once, that
//     the balances follow, and that `gateway audit verify` passes;
//   - outage: stops PostgreSQL in immediate mode under load, keeps it down,
//     restarts it, and checks that the gateway answered error envelopes
//     promptly, reconnected by itself, and that everything still verifies;
//   - multi: runs several gateways with their workers on one database and
//     checks that no callback is sent twice at once, no remittance moves
//     twice, no hold is resolved twice, and the same invariants;
//   - primary, standby, restore: the high-availability scenarios on a
//     pg_auto_failover formation (ha.go, docs/ha.md): the primary's or the
//     standby's machine lost under load from several gateways, and a
//     restore from backup to a moment;
//   - standby3, primary3: the same losses on a formation of three data
//     nodes (ha_three.go), with the single-copy window measured
//     (ha_copies.go);
//   - cells: two cells, each a formation, one gateway over both; one
//     cell's primary lost under load on both (cells.go);
//   - move, movekill: on two such cells, a merchant moved between them
//     under load, and the mover killed mid-move, then resumed or rolled
//     back (moves.go).
//
// It prints what it did and what it found, and exits 1 on any violation.
// docs/reliability.md describes each fault and the observed results.
package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	merchants "github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger/pgcluster"
)

func main() {
	os.Exit(run())
}

func run() int {
	fs := flag.NewFlagSet("chaos", flag.ExitOnError)
	only := fs.String("only", "crash,outage,multi,primary,frozen,standby,restore,standby3,primary3,cells,move,movekill",
		"scenarios to run, comma-separated: crash, outage, multi; primary, frozen, standby, restore, standby3, primary3 (the HA scenarios, `make chaos-ha`; the last two on a formation of three data nodes); cells, move, movekill (two formations, `make chaos-cells`: a cell's primary lost, a merchant moved under load, the mover killed mid-move)")
	seedsFlag := fs.String("seeds", "", "comma-separated seeds of the crash runs (default: -runs fresh seeds); the outage and multi scenarios use the first")
	runs := fs.Int("runs", 3, "crash runs (seeds) when -seeds is not given")
	ops := fs.Int("ops", 1200, "money operations per crash run and per outage run")
	clients := fs.Int("clients", 64, "concurrent clients")
	kills := fs.Int("kills", 2, "gateway kills per crash run")
	outage := fs.Duration("outage", 5*time.Second, "how long PostgreSQL stays down")
	promptMax := fs.Duration("prompt-max", 6*time.Second, "the slowest acceptable answer while the database is down")
	instances := fs.Int("instances", 3, "gateways in the multi scenario")
	multiOps := fs.Int("multi-ops", 1000, "shop operations in the multi scenario")
	auths := fs.Int("auths", 240, "authorizations in the multi scenario")
	remits := fs.Int("remittances", 120, "remittances in the multi scenario")
	haPorts := fs.String("ha-ports", "25430,25431,25432", "the HA formation's ports: monitor, node1, node2 (Makefile HA_PORTS)")
	haRuns := fs.Int("ha-runs", 2, "primary-lost runs: the first seeds")
	haOps := fs.Int("ha-ops", 600, "shop operations per primary-lost and standby-lost run")
	haClients := fs.Int("ha-clients", 24, "concurrent clients of the HA runs")
	haRemits := fs.Int("ha-remittances", 40, "remittances per HA loss run, one every 400 ms across the fault")
	haHolds := fs.Int("ha-holds", 30, "holds per HA loss run, left to the gateways' expiry workers")
	moveOps := fs.Int("move-ops", 20000, "bound of the shop operations of the moving merchant per move scenario (the others get twice it); the load ends shortly after the move")
	moveHolds := fs.Int("move-holds", 1500, "bound of the authorizations on the moving merchant's cards per move scenario")
	keep := fs.Bool("keep", false, "keep the temporary directory (logs, PostgreSQL data)")
	verbose := fs.Bool("v", false, "print progress details")
	_ = fs.Parse(os.Args[1:])

	var seeds []uint64
	if *seedsFlag != "" {
		for _, s := range strings.Split(*seedsFlag, ",") {
			n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
			if err != nil {
				fmt.Fprintf(os.Stderr, "chaos: -seeds: %q is not a number\n", s)
				return 2
			}
			seeds = append(seeds, n)
		}
	} else {
		for i := 0; i < *runs; i++ {
			var b [8]byte
			_, _ = rand.Read(b[:])
			seeds = append(seeds, binary.LittleEndian.Uint64(b[:])%1_000_000_000+1)
		}
	}
	want := map[string]bool{}
	for _, s := range strings.Split(*only, ",") {
		want[strings.TrimSpace(s)] = true
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e := &env{out: os.Stdout, verbose: *verbose}
	tmp, err := os.MkdirTemp("", "chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 1
	}
	// PostgreSQL runs as the postgres user when we are root: it must reach
	// the directory.
	_ = os.Chmod(tmp, 0o755)
	e.tmp = tmp
	defer func() {
		if *keep {
			fmt.Printf("kept %s (gateway logs in %s)\n", tmp, filepath.Join(tmp, "logs"))
			return
		}
		os.RemoveAll(tmp)
	}()
	e.dataKey = make([]byte, merchants.DataKeyBytes)
	_, _ = rand.Read(e.dataKey)
	tok := make([]byte, 24)
	_, _ = rand.Read(tok)
	e.token = hex.EncodeToString(tok)
	if e.sealer, err = merchants.NewSealer(e.dataKey); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 1
	}

	e.logf("chaos: building the gateway into %s", tmp)
	if err := e.build(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 1
	}
	e.pgOpts = pgcluster.Options{Dir: filepath.Join(tmp, "pg"), Durable: true, Log: os.Stdout,
		Settings: map[string]string{"max_connections": "400"}}
	e.logf("chaos: starting a durable PostgreSQL (fsync and synchronous commit on) in %s", e.pgOpts.Dir)
	if err := e.startPG(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 1
	}
	defer e.stopPG()

	var results []*result
	report := func(r *result) {
		results = append(results, r)
		e.logf("%s, seed %d: %d operations, %d kills, %d restarts, %d retried operations, %d violations (%s)",
			r.fault, r.seed, r.ops, r.kills, r.restarts, r.retries, len(r.violations), r.elapsed.Round(time.Second))
		for _, n := range r.notes {
			fmt.Printf("    %s\n", n)
		}
		for i, v := range r.violations {
			if i == 30 {
				fmt.Printf("    VIOLATION … and %d more\n", len(r.violations)-30)
				break
			}
			fmt.Printf("    VIOLATION %s\n", v)
		}
	}
	if want["crash"] {
		for _, s := range seeds {
			if ctx.Err() != nil {
				break
			}
			e.logf("crash: seed %d: %d operations from %d clients, %d kills", s, *ops, *clients, *kills)
			report(runCrash(ctx, e, s, crashOptions{ops: *ops, clients: *clients, kills: *kills}))
		}
	}
	if want["outage"] && ctx.Err() == nil {
		e.logf("outage: seed %d: %d operations from %d clients, PostgreSQL down %s", seeds[0], *ops, *clients, *outage)
		report(runOutage(ctx, e, seeds[0], outageOptions{ops: *ops, clients: *clients, down: *outage, promptMax: *promptMax}))
	}
	if want["multi"] && ctx.Err() == nil {
		e.logf("multi: seed %d: %d gateways, %d shop operations, %d authorizations, %d remittances",
			seeds[0], *instances, *multiOps, *auths, *remits)
		report(runMulti(ctx, e, seeds[0], multiOptions{instances: *instances, ops: *multiOps, clients: *clients,
			auths: *auths, remits: *remits}))
	}

	if (want["primary"] || want["frozen"] || want["standby"] || want["restore"]) && ctx.Err() == nil {
		ports, err := parsePorts(*haPorts)
		if err != nil {
			fmt.Fprintln(os.Stderr, "chaos: -ha-ports:", err)
			return 2
		}
		ho := haOptions{instances: *instances, ops: *haOps, clients: *haClients, remits: *haRemits, holds: *haHolds}
		if err := runHAScenarios(ctx, e, want, ports, seeds, *haRuns, ho, report); err != nil {
			fmt.Fprintln(os.Stderr, "chaos:", err)
			return 1
		}
	}
	if (want["standby3"] || want["primary3"]) && ctx.Err() == nil {
		ho := haOptions{instances: *instances, ops: *haOps, clients: *haClients, remits: *haRemits, holds: *haHolds}
		if err := runHA3Scenarios(ctx, e, want, seeds, ho, report); err != nil {
			fmt.Fprintln(os.Stderr, "chaos:", err)
			return 1
		}
	}
	if want["cells"] && ctx.Err() == nil {
		// After the HA scenarios have stopped their formations: the machine
		// runs the two cells' formations alone.
		e.logf("cells: seed %d: %d operations on cell b2 from %d clients, as many clients on cell a1", seeds[0], *haOps, max(1, *haClients/2))
		report(runCellsScenario(ctx, e, seeds[0], cellsOptions{ops: *haOps, clients: max(1, *haClients/2)}))
	}
	if (want["move"] || want["movekill"]) && ctx.Err() == nil {
		// Two fresh formations of their own: the moves' directory and
		// cells start clean of the cells scenario's failover.
		e.logf("moves: seed %d: two cells, %d clients on the other merchants, %d on the moving one", seeds[0], max(1, *haClients/2), max(1, *haClients/4))
		runMoveScenarios(ctx, e, seeds[0], want, movesOptions{clients: max(1, *haClients/2), ops: *moveOps, holds: *moveHolds}, report)
	}

	fmt.Println()
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "fault\thow injected\toperations\tkills/restarts\tretried ops\tviolations\tseed\ttime")
	total := 0
	for _, r := range results {
		total += len(r.violations)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d/%d\t%d\t%d\t%d\t%s\n", r.fault, shorten(r.injected, 70), r.ops, r.kills, r.restarts,
			r.retries, len(r.violations), r.seed, r.elapsed.Round(time.Second))
	}
	tw.Flush()
	printHATable(results)
	fmt.Println()
	for _, r := range results {
		fmt.Printf("reproduce %s: %s\n", r.fault, r.reproduce)
	}
	if ctx.Err() != nil {
		fmt.Println("chaos: interrupted")
		return 1
	}
	if total > 0 {
		fmt.Printf("chaos: %d violations\n", total)
		return 1
	}
	fmt.Println("chaos: no violations")
	return 0
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}
