package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgcluster"
	"github.com/paygate/gateway/postings"
)

type benchEnv struct {
	ctx     context.Context
	cluster *pgcluster.Cluster
	o       options
	log     io.Writer
	dbSeq   int
}

type scenario struct {
	name string
	run  func(env *benchEnv) ([]row, error)
}

func scenarios() []scenario {
	return []scenario{
		{"ledger-spread", benchLedgerSpread},
		{"ledger-hot", benchLedgerHot},
	}
}

// newDatabase creates a fresh migrated database and returns its URL.
func (env *benchEnv) newDatabase() (string, error) {
	env.dbSeq++
	name := fmt.Sprintf("bench_%d", env.dbSeq)
	if err := env.cluster.CreateDatabase(env.ctx, name); err != nil {
		return "", err
	}
	return env.cluster.URL(name), nil
}

// drive runs op from concurrency workers for the configured duration, after
// a short warm-up, and returns throughput and latencies of the operations
// that succeeded. An operation error other than errSkip stops the run.
func (env *benchEnv) drive(op func(worker, i int) error) (float64, latencies, error) {
	ctx, cancel := context.WithCancel(env.ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		all      latencies
		count    atomic.Int64
		firstErr error
		measure  atomic.Bool
	)
	warmup := time.Second
	if env.o.duration < 5*time.Second {
		warmup = 0
		measure.Store(true)
	}
	for w := 0; w < env.o.concurrency; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var local latencies
			for i := 0; ctx.Err() == nil; i++ {
				t0 := time.Now()
				err := op(w, i)
				d := time.Since(t0)
				if err != nil && ctx.Err() == nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					cancel()
					break
				}
				if measure.Load() && ctx.Err() == nil {
					local = append(local, d)
					count.Add(1)
				}
			}
			mu.Lock()
			all = append(all, local...)
			mu.Unlock()
		}(w)
	}
	time.Sleep(warmup)
	measure.Store(true)
	start := time.Now()
	select {
	case <-time.After(env.o.duration):
	case <-ctx.Done():
	}
	elapsed := time.Since(start)
	cancel()
	wg.Wait()
	if firstErr != nil {
		return 0, nil, firstErr
	}
	return float64(count.Load()) / elapsed.Seconds(), all, nil
}

func newBenchLedger(env *benchEnv) (*ledger.Ledger, func(), error) {
	u, err := env.newDatabase()
	if err != nil {
		return nil, nil, err
	}
	db, err := ledger.OpenDB(env.ctx, u, ledger.DBOptions{ConnsMax: 40})
	if err != nil {
		return nil, nil, err
	}
	if err := ledger.Migrate(env.ctx, db); err != nil {
		db.Close()
		return nil, nil, err
	}
	key := make([]byte, ledger.DataKeyBytes)
	_, _ = rand.Read(key)
	sealer, _ := ledger.NewSealer(key)
	l := ledger.New(db, ledger.Config{Sealer: sealer})
	return l, func() { l.Close(); db.Close() }, nil
}

// benchLedgerSpread appends CARD_TRANSFER_IN entries spread over 10,000
// cards of 100 merchants, against the same postings as plain SQL.
func benchLedgerSpread(env *benchEnv) ([]row, error) {
	const merchantsN, cardsPer = 100, 100
	return benchLedger(env, "ledger-spread", merchantsN, cardsPer,
		"Append over 10,000 cards of 100 merchants vs one plain-SQL transaction per posting")
}

// benchLedgerHot appends CARD_FUND entries that all debit one merchant's
// funding account, against the same postings as plain SQL on one hot row.
func benchLedgerHot(env *benchEnv) ([]row, error) {
	return benchLedger(env, "ledger-hot", 1, 10_000,
		"every entry debits one funding account: group commit vs the row-locked plain-SQL ceiling")
}

func benchLedger(env *benchEnv, name string, merchantsN, cardsPer int, note string) ([]row, error) {
	l, closeFn, err := newBenchLedger(env)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	merchants := make([]int64, merchantsN)
	for i := range merchants {
		m, _, err := l.CreateMerchant(env.ctx, ledger.MerchantSpec{Name: fmt.Sprintf("bench %d", i), Currencies: []string{"USD"}})
		if err != nil {
			return nil, err
		}
		if _, err := l.Deposit(env.ctx, m.ID, "USD", 1_000_000_000_00, nil); err != nil {
			return nil, err
		}
		merchants[i] = m.ID
	}
	kind := postings.KindCardTransferIn
	if merchantsN == 1 {
		kind = postings.KindCardFund
	}
	rngs := make([]*mrand.Rand, env.o.concurrency)
	for i := range rngs {
		rngs[i] = mrand.New(mrand.NewPCG(uint64(i), 7))
	}
	before := l.Stats()
	ops, lat, err := env.drive(func(w, i int) error {
		m := merchants[rngs[w].IntN(len(merchants))]
		card := fmt.Sprintf("crd_%d_%d", m, rngs[w].IntN(cardsPer))
		_, err := l.Append(env.ctx, ledger.Batch{Merchant: m, Entries: []postings.Entry{{
			Merchant: m, Kind: kind, Refs: postings.Refs{CardNo: card},
			Postings: []postings.Posting{{
				Source:      postings.MerchantAccount(m, postings.AccountFunding, "USD"),
				Destination: postings.CardAccount(m, postings.AccountCardAvailable, "USD", card),
				Amount:      1, Currency: "USD",
			}},
		}}})
		return err
	})
	if err != nil {
		return nil, err
	}
	after := l.Stats()
	batching := float64(after.Commands-before.Commands) / float64(max(1, after.Batches-before.Batches))

	ceiling, err := plainSQLCeiling(env, merchantsN, cardsPer)
	if err != nil {
		return nil, err
	}
	return []row{
		{Scenario: name, OpsPerSec: ops, P50Ms: lat.percentile(0.5), P99Ms: lat.percentile(0.99),
			CeilingOps: ceiling, Ratio: ops / ceiling,
			Note: fmt.Sprintf("%s; %.1f commands per transaction", note, batching)},
	}, nil
}

// plainSQLCeiling writes the same postings with minimal plain-SQL
// transactions — lock and update the two balances in id order (with the
// non-negative CHECK), insert the entry and its posting, commit — one
// transaction per posting, prepared statements, the same concurrency.
func plainSQLCeiling(env *benchEnv, merchantsN, cardsPer int) (float64, error) {
	u, err := env.newDatabase()
	if err != nil {
		return 0, err
	}
	db, err := sql.Open("pgx", u)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(env.o.concurrency + 2)
	db.SetMaxIdleConns(env.o.concurrency + 2)
	// No arguments: one round trip with several statements.
	_, err = db.ExecContext(env.ctx, `
		create table accounts (id bigint primary key, balance bigint not null, constrained boolean not null,
			constraint accounts_non_negative check (not constrained or balance >= 0));
		create table entries (id bigserial primary key, kind text not null, card text, created_at timestamptz not null default now());
		create table postings (entry_id bigint not null references entries (id), source_id bigint not null references accounts (id),
			destination_id bigint not null references accounts (id), amount bigint not null check (amount > 0));`)
	if err != nil {
		return 0, err
	}
	_, err = db.ExecContext(env.ctx, `
		insert into accounts select g, case when g <= $1::bigint then 100000000000 else 0 end, true
		from generate_series(1, $1::bigint + $1::bigint * $2::bigint) g`, merchantsN, cardsPer)
	if err != nil {
		return 0, err
	}
	rngs := make([]*mrand.Rand, env.o.concurrency)
	for i := range rngs {
		rngs[i] = mrand.New(mrand.NewPCG(uint64(i), 7))
	}
	ops, _, err := env.drive(func(w, i int) error {
		m := 1 + rngs[w].IntN(merchantsN)
		card := merchantsN + (m-1)*cardsPer + 1 + rngs[w].IntN(cardsPer)
		tx, err := db.BeginTx(env.ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback() //nolint:errcheck
		// Funding ids are below card ids: this is the id order.
		if _, err := tx.ExecContext(env.ctx, `update accounts set balance = balance - 1 where id = $1`, m); err != nil {
			return err
		}
		if _, err := tx.ExecContext(env.ctx, `update accounts set balance = balance + 1 where id = $1`, card); err != nil {
			return err
		}
		var id int64
		if err := tx.QueryRowContext(env.ctx, `insert into entries (kind, card) values ('CARD_FUND', $1) returning id`, fmt.Sprint(card)).Scan(&id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(env.ctx, `insert into postings values ($1, $2, $3, 1)`, id, m, card); err != nil {
			return err
		}
		err = tx.Commit()
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	})
	return ops, err
}
