package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/cells"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/domains"
	"github.com/paygate/gateway/internal/fx"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/tools/internal/harness"
)

// --- C: one cell against two (issue 33 point 6) ---------------------------
//
// Row 1's transfers through the bench's gateway (one cell: today's layout,
// no GATEWAY_CELLS) and through a second gateway over two cells (a1, b2:
// GATEWAY_CELLS, `gateway cells init`, the router in front), with the same
// number of merchants and cards split between the cells, in one run:
//   - C1: the two-cell gateway's throughput over the one-cell gateway's,
//     measured one, two, two, one (so that a drift of the machine's load
//     over the run falls on both alike): what routing costs;
//   - C2: cell a's throughput with half the clients, alone, then while the
//     other half loads cell b, then alone again: how independent a cell is
//     of the other's load.
//
// Both cells are databases of the bench's one PostgreSQL: on this 2-core
// machine two servers would only add a second set of background processes
// on the same cores. The cells' independence in production is that of two
// machines; here the cores are shared, and C2 says how much that costs
// (docs/performance.md, docs/scaling.md).

// targetCellsRatio: two cells must carry at least this share of one cell's
// throughput on the same machine (routing costs nothing measurable, within
// the run-to-run noise of ±10 %).
const targetCellsRatio = 0.9

// cellsSetup is the two-cell installation: its gateway, a bench per cell
// (its database, ledger and merchants) and the merchants of each.
type cellsSetup struct {
	gw     *gateway
	benchs []*bench // a1, b2
	spread []*spreadSetup
	all    *spreadSetup // both cells' cards
	close  func()
}

func scenarioCells(b *bench) ([]row, error) {
	if b.gatewayBin == "" {
		return nil, fmt.Errorf("scenario C needs the gateway")
	}
	one, err := b.spread()
	if err != nil {
		return nil, err
	}
	two, err := b.twoCells()
	if err != nil {
		return nil, err
	}
	defer two.close()
	sb := two.benchs[0] // its gw is the cells' gateway

	// C1: one, two, two, one.
	var oneRes, twoRes []*runResult
	for i, which := range []string{"one", "two", "two", "one"} {
		progress(b.log, "C1: transfers through the %s-cell gateway, %d clients, %s", which, b.o.concurrency, b.o.duration)
		var res *runResult
		if which == "one" {
			res, err = b.driveTransfers(one, "", fmt.Sprintf("tc1o%d", i))
			oneRes = append(oneRes, res)
		} else {
			res, err = sb.driveTransfers(two.all, "", fmt.Sprintf("tc1t%d", i))
			twoRes = append(twoRes, res)
		}
		if err != nil {
			return nil, err
		}
	}
	r1 := cellsC1Row(fmt.Sprintf("C1 transfers over two cells, %d cards of %d merchants", len(two.all.cards), len(two.all.merchants)), oneRes, twoRes)

	// C2: cell a alone, beside cell b, alone.
	half := max(1, b.o.concurrency/2)
	a, bCell := two.benchs[0], two.benchs[1]
	var alone []*runResult
	var beside, other *runResult
	for i, step := range []string{"alone", "beside", "alone"} {
		progress(b.log, "C2: cell a1's transfers, %d clients, %s (%s)", half, b.o.duration, map[string]string{
			"alone": "cell b2 idle", "beside": fmt.Sprintf("%d more clients on cell b2", half)}[step])
		if step == "alone" {
			res, err := a.driveTransfersN(two.spread[0], half, true, "", fmt.Sprintf("tc2a%d", i))
			if err != nil {
				return nil, err
			}
			alone = append(alone, res)
			continue
		}
		errB := make(chan error, 1)
		go func() {
			var err error
			other, err = bCell.driveTransfersN(two.spread[1], half, false, "", fmt.Sprintf("tc2b%d", i))
			errB <- err
		}()
		beside, err = a.driveTransfersN(two.spread[0], half, true, "", fmt.Sprintf("tc2a%d", i))
		if e := <-errB; err == nil {
			err = e
		}
		if err != nil {
			return nil, err
		}
	}
	r2 := gatewayRow(fmt.Sprintf("C2 cell a1's transfers while b2 is loaded, %d + %d clients", half, half), beside, nil)
	// The processes' CPU in that window served both cells: per operation
	// of either (a1's alone would count b2's work twice).
	if both := float64(beside.n + other.n); both > 0 {
		share := float64(beside.n) / both
		r2.GatewayCPUPerOpMs *= share
		r2.PgCPUPerOpMs *= share
		r2.BenchCPUPerOpMs *= share
	}
	r2.CeilingOps = meanOps(alone) // cell a alone, in the ceiling column
	r2.Ratio = beside.opsPerSec / r2.CeilingOps
	r2.Target = "n/a on 2 shared cores"
	r2.Measured = fmt.Sprintf("%.2f× alone", r2.Ratio)
	r2.Verdict = "n/a"
	r2.Note = joinNotes(fmt.Sprintf("ceiling column: cell a1 alone (runs %s ops/s, p99 %s and %s ms); beside it cell b2 did %.0f ops/s (p99 %s ms), the two %.0f; CPU per operation of either cell; the cells share this machine's two cores and one PostgreSQL, so a1 alone gets the CPU b2 leaves idle",
		opsList(alone), fmtMs(alone[0].p99()), fmtMs(alone[1].p99()), other.opsPerSec, fmtMs(other.p99()), beside.opsPerSec+other.opsPerSec),
		beside.errorNote(), other.errorNote())
	return []row{r1, r2}, nil
}

// cellsC1Row is row C1 from the one-cell and the two-cell runs: the mean
// throughputs, their ratio against targetCellsRatio, and no failed request
// through the two-cell gateway (a request the router loses is a cost too).
func cellsC1Row(name string, oneRes, twoRes []*runResult) row {
	r := gatewayRow(name, twoRes[0], nil)
	r.OpsPerSec = meanOps(twoRes)
	r.CeilingOps = meanOps(oneRes) // the one-cell gateway's, in the ceiling column
	r.Ratio = r.OpsPerSec / r.CeilingOps
	r.Errors = 0
	var notes []string
	for _, t := range twoRes {
		r.Errors += t.errs
		notes = append(notes, t.errorNote())
	}
	r.Target = fmt.Sprintf("≥ %.1f× one cell, no error", targetCellsRatio)
	r.Measured = fmt.Sprintf("%.2f×", r.Ratio)
	if r.Errors > 0 {
		r.Measured += fmt.Sprintf(", %d errors", r.Errors)
	}
	r.Verdict = verdict(r.Ratio >= targetCellsRatio && r.Errors == 0)
	r.Note = joinNotes(append([]string{fmt.Sprintf("ceiling column: the one-cell gateway (row 1's, no GATEWAY_CELLS); latencies and CPU: the first two-cell run; runs one, two, two, one: one cell %s ops/s, two cells %s ops/s; both cells are databases of the bench's one PostgreSQL",
		opsList(oneRes), opsList(twoRes)),
		// CPU per operation moves less with the machine's load than
		// throughput does: the router's cost, if any, would show here.
		fmt.Sprintf("gateway CPU ms/op, mean of the runs: one cell %.3f, two cells %.3f; postgres %.3f and %.3f",
			meanOf(oneRes, func(r *runResult) float64 { return r.cpuPerOpMs }), meanOf(twoRes, func(r *runResult) float64 { return r.cpuPerOpMs }),
			meanOf(oneRes, func(r *runResult) float64 { return r.pgCPUPerOpMs }), meanOf(twoRes, func(r *runResult) float64 { return r.pgCPUPerOpMs }))},
		notes...)...)
	return r
}

func meanOps(rs []*runResult) float64 {
	return meanOf(rs, func(r *runResult) float64 { return r.opsPerSec })
}

func meanOf(rs []*runResult, f func(*runResult) float64) float64 {
	sum := 0.0
	for _, r := range rs {
		sum += f(r)
	}
	return sum / float64(len(rs))
}

func opsList(rs []*runResult) string {
	var s []string
	for _, r := range rs {
		s = append(s, fmt.Sprintf("%.0f", r.opsPerSec))
	}
	return strings.Join(s, ", ")
}

// twoCells makes the two-cell installation: two databases of the bench's
// PostgreSQL made cells a1 and b2 by `gateway cells init`, a gateway over
// them, and row 1's merchants split between them (made in each cell as its
// numbers say, then placed in the directory by `gateway cells init` again,
// the documented way to place merchants a cell lacks in the directory).
func (b *bench) twoCells() (_ *cellsSetup, err error) {
	ctx := b.ctx
	two := &cellsSetup{all: &spreadSetup{}}
	var closers []func()
	two.close = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			two.close()
		}
	}()
	names := []string{"a1", "b2"}
	var spec []string
	var dbs []*cellDB
	for _, name := range names {
		url, err := b.newDatabase()
		if err != nil {
			return nil, err
		}
		c, err := openCellDB(ctx, url, b.dataKey)
		if err != nil {
			return nil, err
		}
		closers = append(closers, c.close)
		dbs = append(dbs, c)
		spec = append(spec, name+"="+url)
	}
	cellsEnv := []string{"DATABASE_URL=", "GATEWAY_CELLS=" + strings.Join(spec, ",")}
	if err := b.cellsInit(cellsEnv); err != nil {
		return nil, err
	}
	progress(b.log, "C: cells %s made by `gateway cells init`", strings.Join(names, ", "))
	two.gw, err = startGatewayOn(ctx, b.gatewayBin, b, "", "gw-cells", "gateway-cells.log", b.log, cellsEnv...)
	if err != nil {
		return nil, err
	}
	closers = append(closers, two.gw.stop)
	for i, c := range dbs {
		id, ok, err := cells.ReadIdentity(ctx, c.db)
		if err != nil || !ok || id.Name != names[i] {
			return nil, fmt.Errorf("cell %s's identity: %+v %v %v", names[i], id, ok, err)
		}
		c.ms.InCell(id.Number)
		c.cards.InCell(id.Name, id.Number)
		o := b.o
		o.merchants = max(1, b.o.merchants/len(dbs))
		cb := &bench{ctx: ctx, o: o, log: b.log, dir: b.dir, dataKey: b.dataKey, db: c.db, l: c.l, ms: c.ms, cards: c.cards,
			gw: two.gw, cluster: b.cluster, gatewayBin: b.gatewayBin, round: b.round}
		s, err := cb.spread()
		if err != nil {
			return nil, fmt.Errorf("cell %s: %w", names[i], err)
		}
		two.benchs = append(two.benchs, cb)
		two.spread = append(two.spread, s)
		two.all.merchants = append(two.all.merchants, s.merchants...)
		two.all.cards = append(two.all.cards, s.cards...)
	}
	// Placed in the directory: the merchants made in each cell above.
	if err := b.cellsInit(cellsEnv); err != nil {
		return nil, err
	}
	return two, nil
}

// cellsInit runs `gateway cells init` with the cells' settings.
func (b *bench) cellsInit(cellsEnv []string) error {
	cmd := exec.CommandContext(b.ctx, b.gatewayBin, "cells", "init")
	cmd.Env = append(harness.MinimalEnv(), append([]string{"DATABASE_ALLOW_SUPERUSER=1", "GATEWAY_DATA_KEY=" + b.dataKey,
		"GATEWAY_DATA_DIR=" + filepath.Join(b.dir, "cells-init"), "GATEWAY_LOG_LEVEL=warn"}, cellsEnv...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("gateway cells init: %w: %s", err, strings.TrimSpace(out.String()))
	}
	return nil
}

// cellDB is one cell's database opened in this process, with the ledger
// and the domains the setup uses.
type cellDB struct {
	db    *bun.DB
	l     *ledger.Ledger
	ms    *merchant.Service
	cards *cards.Service
}

func openCellDB(ctx context.Context, url, dataKey string) (*cellDB, error) {
	db, err := database.OpenDB(ctx, url, database.DBOptions{ConnsMax: 40})
	if err != nil {
		return nil, err
	}
	if err := database.Migrate(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	key, err := hex.DecodeString(dataKey)
	if err != nil {
		db.Close()
		return nil, err
	}
	sealer, err := merchant.NewSealer(key)
	if err != nil {
		db.Close()
		return nil, err
	}
	l := ledger.New(db, ledger.Config{Domains: domains.All()})
	ms := merchant.New(l, sealer)
	return &cellDB{db: db, l: l, ms: ms, cards: cards.New(l, fx.New(l, 0), ms)}, nil
}

func (c *cellDB) close() {
	c.l.Close()
	c.db.Close()
}
