package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"time"

	merchants "github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/pgha"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgcluster"
	"github.com/paygate/gateway/postings"
)

// runHARestore is the restore scenario: a backup of the formation (full
// the first time, incremental after), deposits with keys, a moment read
// from the primary's clock, more deposits, the WAL switched and archived;
// then pgBackRest restores the backup and the archived WAL up to the moment
// into a new cluster, which must hold exactly the deposits before the
// moment and pass `gateway audit verify`.
func runHARestore(ctx context.Context, e *env, h *haFormation, seed uint64, deposits int) *result {
	start := time.Now()
	res := &result{fault: "restore from backup", seed: seed, ops: 2 * deposits,
		injected:  "pgBackRest backup, writes, a moment, writes; restore to the moment into a new cluster",
		reproduce: fmt.Sprintf("make chaos-ha CHAOS_ARGS='-only restore -seeds %d'", seed)}
	add, fail := res.recorders(start)
	if err := h.waitSynchronous(ctx, 3*time.Minute); err != nil {
		return fail("before the run: %v", err)
	}
	dbName := fmt.Sprintf("chaos_restore_%d", seed)
	url, err := h.newDatabase(ctx, dbName)
	if err != nil {
		return fail("database: %v", err)
	}
	db, l, err := e.openLedger(ctx, url, 4, ledger.Config{Shards: 1}, 0)
	if err != nil {
		return fail("ledger: %v", err)
	}
	defer db.Close()
	defer l.Close()
	m, _, err := l.merchants.CreateMerchant(ctx, merchants.Spec{Name: "Restore shop", Currencies: []string{"USD"}})
	if err != nil {
		return fail("merchant: %v", err)
	}
	kind := "full"
	if bs, err := h.repo.Backups(ctx); err == nil && len(bs) > 0 {
		kind = "incr"
	}
	backupStart := time.Now()
	if err := h.repo.Backup(ctx, kind); err != nil {
		return fail("%s backup: %v", kind, err)
	}
	backupTook := time.Since(backupStart)
	// The moment may fall within the second the backup ended in, which
	// pgBackRest cannot tell apart: name the set.
	bs, err := h.repo.Backups(ctx)
	if err != nil || len(bs) == 0 {
		return fail("listing the backups: %v (%d)", err, len(bs))
	}
	set := bs[len(bs)-1].Label
	deposit := func(n int, amount int64) error {
		_, err := l.Deposit(ctx, m.ID, "USD", amount, &ledger.Idempotency{Scope: ledger.ScopeLedger, Key: fmt.Sprintf("restore-%d-%d", seed, n)})
		return err
	}
	for n := 1; n <= deposits; n++ {
		if err := deposit(n, 10_00); err != nil {
			return fail("deposit %d: %v", n, err)
		}
	}
	// The moment, by the primary's clock (the WAL's commit times are its
	// own): after every acknowledged deposit so far, before any later one.
	var moment time.Time
	if err := db.NewRaw("select clock_timestamp()").Scan(ctx, &moment); err != nil {
		return fail("the moment: %v", err)
	}
	for n := deposits + 1; n <= 2*deposits; n++ {
		if err := deposit(n, 1_000_00); err != nil {
			return fail("deposit %d: %v", n, err)
		}
	}
	if err := pgha.SwitchAndArchive(ctx, h.f.URL("postgres")); err != nil {
		return fail("archiving the WAL: %v", err)
	}

	restoreStart := time.Now()
	dir, err := pgcluster.PrepareDir(filepath.Join(e.tmp, fmt.Sprintf("restored-%d", seed)), nil)
	if err != nil {
		return fail("%v", err)
	}
	if err := h.repo.RestoreToTime(ctx, filepath.Join(dir, "data"), moment, set); err != nil {
		return fail("restore: %v", err)
	}
	ports, err := pgha.FreePorts(1)
	if err != nil {
		return fail("%v", err)
	}
	// Alone, the restored server must neither wait for the formation's
	// synchronous standby nor archive into the formation's repository.
	c, err := pgcluster.Start(ctx, pgcluster.Options{Dir: dir, Port: ports[0], ListenAddresses: "127.0.0.1",
		TrustTCP: true, // reached as postgres over loopback TCP, as the pair
		Settings: map[string]string{"synchronous_standby_names": "", "archive_mode": "off"}})
	if err != nil {
		return fail("starting the restored cluster: %v", err)
	}
	defer func() { _ = c.Stop() }()
	rdb, err := sql.Open("pgx", c.URL(dbName))
	if err != nil {
		return fail("%v", err)
	}
	defer rdb.Close()
	for {
		var inRecovery bool
		err := rdb.QueryRowContext(ctx, "select pg_is_in_recovery()").Scan(&inRecovery)
		if err == nil && !inRecovery {
			break
		}
		if time.Since(restoreStart) > 10*time.Minute || ctx.Err() != nil {
			return fail("the restored cluster never left recovery (%v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	restoreTook := time.Since(restoreStart)
	if ok, out := e.auditVerify(ctx, c.URL(dbName)); !ok {
		add("gateway audit verify of the restored database: %s", out)
	}
	var got int
	var bal int64
	if err := rdb.QueryRowContext(ctx, "select count(*) from entries where kind = 'DEPOSIT' and merchant_id = $1", m.ID).Scan(&got); err != nil {
		add("counting deposits: %v", err)
	}
	rdbBun, rl, err := e.openLedger(ctx, c.URL(dbName), 2, ledger.Config{Shards: 1}, 0)
	if err != nil {
		add("ledger on the restored database: %v", err)
	} else {
		defer rdbBun.Close()
		defer rl.Close()
		if bal, err = rl.Balance(ctx, postings.MerchantAccount(m.ID, postings.AccountFunding, "USD")); err != nil {
			add("restored balance: %v", err)
		}
	}
	if got != deposits || bal != int64(deposits)*10_00 {
		add("the restored database has %d deposits and a balance of %d; the %d before the moment make %d", got, bal, deposits, int64(deposits)*10_00)
	}
	res.ha = &haFigures{restore: restoreTook, restoredWant: deposits, restGot: got}
	res.notes = append(res.notes,
		fmt.Sprintf("%s backup %s; %d deposits, the moment, %d more; restore to the moment and recovery %s; %d deposits restored (want %d), audit verify passed unless listed",
			kind, backupTook.Round(time.Millisecond), deposits, deposits, restoreTook.Round(time.Millisecond), got, deposits))
	res.elapsed = time.Since(start)
	return res
}
