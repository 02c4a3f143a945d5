package main

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/domains"
	"github.com/paygate/gateway/internal/fx"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/pgha"
	"github.com/paygate/gateway/ledger"
)

// --- S: transfers with a synchronous standby ------------------------------
//
// Scenario 1's transfers on a primary with a standby (internal/pgha.Pair,
// durable: fsync on both), driven three times through one gateway on the
// pair's multi-host URL: the standby synchronous (every COMMIT waits until
// the standby has flushed its WAL: what issue 19 makes the production
// setting), then asynchronous (streaming, nobody waits), then stopped (the
// primary alone: what every other row measures). Same server, data,
// gateway and clients, so the rows differ by replication only; PostgreSQL's
// CPU per operation counts both servers (docs/ha.md, docs/performance.md).

func scenarioStandby(b *bench) ([]row, error) {
	if b.gatewayBin == "" {
		return nil, fmt.Errorf("scenario H needs the gateway")
	}
	ctx := b.ctx
	progress(b.log, "H: starting a durable primary and a synchronous standby (pgha.Pair)")
	// A pair of its own each round (its data removed once it has stopped).
	dir := filepath.Join(b.dir, fmt.Sprintf("pair-r%d", b.round))
	defer os.RemoveAll(dir) //nolint:errcheck
	p, err := pgha.StartPair(ctx, pgha.PairOptions{Dir: dir, Durable: true,
		Settings: map[string]string{"shared_buffers": "512MB", "max_wal_size": "4GB", "checkpoint_timeout": "15min"}})
	if err != nil {
		return nil, err
	}
	defer p.Stop()
	if err := p.CreateDatabase(ctx, "gateway"); err != nil {
		return nil, err
	}
	url := p.URL("gateway")
	db, err := database.OpenDB(ctx, url, database.DBOptions{ConnsMax: 80})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := database.Migrate(ctx, db); err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(b.dataKey)
	if err != nil {
		return nil, err
	}
	sealer, err := merchant.NewSealer(key)
	if err != nil {
		return nil, err
	}
	l := ledger.New(db, ledger.Config{Domains: domains.All()})
	ms := merchant.New(l, sealer)
	defer l.Close()
	gw, err := startGatewayOn(ctx, b.gatewayBin, b, url, "gw-pair", "gateway-pair.log", b.log)
	if err != nil {
		return nil, err
	}
	defer gw.stop()
	// A bench of its own on the pair: the same setup code, the pair's
	// ledger, the pair's gateway, both servers' CPU.
	sb := &bench{ctx: ctx, o: b.o, log: b.log, dir: b.dir, dataKey: b.dataKey, db: db, l: l, ms: ms, gw: gw,
		pgDataDirs: []string{p.Primary().DataDir(), p.Standby().DataDir()}, gatewayBin: b.gatewayBin}
	sb.cards = cards.New(l, fx.New(l, 0), ms)
	s, err := sb.spread()
	if err != nil {
		return nil, err
	}
	primary, err := sql.Open("pgx", p.Primary().URL("postgres"))
	if err != nil {
		return nil, err
	}
	defer primary.Close()

	var rows []row
	measure := func(id, what string) error {
		var sync string
		if err := primary.QueryRowContext(ctx, "select current_setting('synchronous_standby_names')").Scan(&sync); err != nil {
			return err
		}
		progress(b.log, "H: transfers, %s (synchronous_standby_names = %q), %d clients, %s", what, sync, b.o.concurrency, b.o.duration)
		res, err := sb.driveTransfers(s, "S-"+id, "ts"+id)
		if err != nil {
			return err
		}
		r := gatewayRow(fmt.Sprintf("%s transfers IN/OUT, %s", id, what), res, nil)
		r.Note = joinNotes(fmt.Sprintf("one durable primary (fsync on)%s; synchronous_standby_names = %q; postgres CPU counts both servers",
			map[bool]string{true: " and its standby", false: " alone (the standby stopped)"}[what != "no standby"], sync), res.errorNote())
		rows = append(rows, r)
		return nil
	}
	if err := measure("H1", "synchronous standby"); err != nil {
		return rows, err
	}
	if err := setSync(ctx, primary, ""); err != nil {
		return rows, err
	}
	if err := measure("H2", "asynchronous standby"); err != nil {
		return rows, err
	}
	p.Standby().Stop()
	if err := measure("H3", "no standby"); err != nil {
		return rows, err
	}
	// The cost, as the target columns of the synchronous row.
	if len(rows) == 3 && rows[2].OpsPerSec > 0 {
		rows[0].Target = "cost of sync vs none"
		rows[0].Measured = fmt.Sprintf("%.0f%% ops/s, p50 +%.2f ms", 100*(rows[0].OpsPerSec/rows[2].OpsPerSec-1), rows[0].P50Ms-rows[2].P50Ms)
		rows[0].Verdict = "n/a"
	}
	return rows, nil
}

// setSync sets the primary's synchronous_standby_names and waits until new
// sessions see it.
func setSync(ctx context.Context, db *sql.DB, names string) error {
	if _, err := db.ExecContext(ctx, "alter system set synchronous_standby_names = '"+names+"'"); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, "select pg_reload_conf()"); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got string
		if err := db.QueryRowContext(ctx, "select current_setting('synchronous_standby_names')").Scan(&got); err != nil {
			return err
		}
		if got == names {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("synchronous_standby_names is still %q", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
