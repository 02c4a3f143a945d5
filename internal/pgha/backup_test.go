package pgha_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/domains"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/pgha"
	"github.com/paygate/gateway/internal/pgha/pghatest"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgcluster"
	"github.com/paygate/gateway/postings"
)

// openLedger opens a migrated ledger on url.
func openLedger(ctx context.Context, t *testing.T, url string, sealer *merchant.Sealer) *ledger.Ledger {
	t.Helper()
	db, err := database.OpenDB(ctx, url, database.DBOptions{ConnsMax: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := database.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	l := ledger.New(db, ledger.Config{Shards: 1, Domains: domains.All()})
	t.Cleanup(func() {
		l.Close()
		db.Close()
	})
	return l
}

// A backup, writes, a moment, more writes; a restore to that moment into a
// fresh cluster holds exactly the writes before it, and the ledger verifies
// there. The repository is encrypted, and refused without its passphrase. pgBackRest backs up the pair's primary (the stanza names both
// nodes) and the primary archives its WAL into the same repository.
func TestRestoreToAMoment(t *testing.T) {
	t.Parallel()
	pghatest.NeedTool(t, pgha.FindPgBackRest)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := pghatest.Dir(t)
	repo, err := pgha.NewRepo(filepath.Join(dir, "backup"), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := pghatest.StartPairWith(t, pgha.PairOptions{Dir: filepath.Join(dir, "pair"), Settings: repo.ArchiveSettings()})
	var servers []pgha.PGServer
	for _, n := range p.Nodes() {
		servers = append(servers, n.Server())
	}
	if err := repo.Configure(servers); err != nil {
		t.Fatal(err)
	}
	if err := p.CreateDatabase(ctx, "gateway"); err != nil {
		t.Fatal(err)
	}
	key := make([]byte, merchant.DataKeyBytes)
	_, _ = rand.Read(key)
	sealer, err := merchant.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	l := openLedger(ctx, t, p.Primary().URL("gateway"), sealer)
	m, _, err := merchant.New(l, sealer).CreateMerchant(ctx, merchant.Spec{Name: "PITR Shop", Currencies: []string{"USD"}})
	if err != nil {
		t.Fatal(err)
	}
	deposit := func(n int, amount int64) {
		t.Helper()
		if _, err := l.Deposit(ctx, m.ID, "USD", amount, &ledger.Idempotency{Scope: ledger.ScopeLedger, Key: fmt.Sprintf("dep-%d", n)}); err != nil {
			t.Fatalf("deposit %d: %v", n, err)
		}
	}
	deposit(1, 100_00)

	started := time.Now()
	if err := repo.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := repo.Backup(ctx, "full"); err != nil {
		t.Fatal(err)
	}
	backedUp := time.Now()

	for n := 2; n <= 4; n++ {
		deposit(n, 10_00)
	}
	// The moment, by the primary's clock (commit times in the WAL are its
	// own): after every acknowledged deposit so far, before any later one.
	primary, err := sql.Open("pgx", p.Primary().URL("gateway"))
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close()
	var moment time.Time
	if err := primary.QueryRowContext(ctx, "select clock_timestamp()").Scan(&moment); err != nil {
		t.Fatal(err)
	}
	for n := 5; n <= 7; n++ {
		deposit(n, 1_000_00)
	}
	if err := pgha.SwitchAndArchive(ctx, p.Primary().URL("postgres")); err != nil {
		t.Fatal(err)
	}

	restoreStart := time.Now()
	restoredDir, err := pgcluster.PrepareDir(filepath.Join(dir, "restored"), nil)
	if err != nil {
		t.Fatal(err)
	}
	backups, err := repo.Backups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(backups) != 1 || backups[0].Type != "full" {
		t.Fatalf("pgbackrest info lists %+v, want the one full backup", backups)
	}
	// The repository is encrypted (issue 31, point 4), and without its
	// passphrase a restore is refused, saying what is missing; with it
	// back, the restore below works.
	if c, err := repo.Cipher(ctx); err != nil || c != "aes-256-cbc" {
		t.Errorf("the repository's cipher is %q (%v), want aes-256-cbc", c, err)
	}
	if repo.CipherFile() != "" {
		away := repo.CipherFile() + ".away"
		if err := os.Rename(repo.CipherFile(), away); err != nil {
			t.Fatal(err)
		}
		err := repo.RestoreToTime(ctx, filepath.Join(restoredDir, "data"), moment, backups[0].Label)
		if err == nil || !strings.Contains(err.Error(), "is encrypted") || !strings.Contains(err.Error(), "passphrase") {
			t.Errorf("a restore without the passphrase: %v; want refused, naming the missing passphrase", err)
		}
		if err := os.Rename(away, repo.CipherFile()); err != nil {
			t.Fatal(err)
		}
	}
	// The moment may be within the second the backup ended in: name it.
	if err := repo.RestoreToTime(ctx, filepath.Join(restoredDir, "data"), moment, backups[0].Label); err != nil {
		t.Fatal(err)
	}
	ports, err := pgha.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	// The restored files name the pair's synchronous standby
	// (postgresql.auto.conf); alone, the restored server must not wait
	// for it.
	restored, err := pgcluster.Start(ctx, pgcluster.Options{Dir: restoredDir, Port: ports[0],
		Settings: map[string]string{"synchronous_standby_names": ""}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = restored.Stop() })
	rdb, err := sql.Open("pgx", restored.URL("gateway"))
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	// The server answers read-only while it replays; the restore is done
	// when it has promoted itself at the target.
	for {
		var inRecovery bool
		if err := rdb.QueryRowContext(ctx, "select pg_is_in_recovery()").Scan(&inRecovery); err != nil {
			t.Fatal(err)
		}
		if !inRecovery {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the restored cluster never left recovery")
		case <-time.After(50 * time.Millisecond):
		}
	}
	restoredAt := time.Now()

	rl := openLedger(ctx, t, restored.URL("gateway"), sealer)
	rep, err := audit.New(rl).Verify(ctx, audit.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("audit verify of the restored ledger: %+v", rep.Problems)
	}
	bal, err := rl.Balance(ctx, postings.MerchantAccount(m.ID, postings.AccountFunding, "USD"))
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(100_00 + 3*10_00); bal != want {
		t.Errorf("restored funding balance %d, want %d: the deposits before the moment and none after", bal, want)
	}
	var deposits int
	if err := rdb.QueryRowContext(ctx, "select count(*) from entries where kind = 'DEPOSIT'").Scan(&deposits); err != nil {
		t.Fatal(err)
	}
	if deposits != 4 || rep.Entries != 4 {
		t.Errorf("the restored journal has %d deposits (%d entries), want the 4 before the moment", deposits, rep.Entries)
	}
	t.Logf("pgBackRest: stanza + check + full backup %s; restore to the moment and recovery %s",
		backedUp.Sub(started).Round(time.Millisecond), restoredAt.Sub(restoreStart).Round(time.Millisecond))
}
