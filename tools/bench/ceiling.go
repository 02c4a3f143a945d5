package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strconv"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
)

// The ceilings: what minimal plain SQL does with the same postings (or
// reads) at the same concurrency, on the same PostgreSQL, in the same run.
// Each gets a fresh database with only what it needs: accounts with a
// non-negative CHECK, entries and postings. Statements are prepared (pgx's
// statement cache); one transaction per operation.

// ceilingDB opens a fresh database for a ceiling with room for conc
// connections.
func (b *bench) ceilingDB(conc int) (*sql.DB, error) {
	u, err := b.newDatabase()
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("pgx", u)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(conc + 2)
	db.SetMaxIdleConns(conc + 2)
	return db, nil
}

// moveFn picks, for worker w, the account to debit and the one to credit
// (ids from 1 … accounts).
type moveFn func(rng *mrand.Rand) (debit, credit int64)

// ceilingMoves runs one plain-SQL transaction per posting: lock and update
// the two balances in id order (with the CHECK), insert the entry and its
// posting, commit. Accounts 1 … funded start with fundedMinor, the others
// with cardMinor; all are constrained (never below zero).
func (b *bench) ceilingMoves(conc, accounts, funded int, fundedMinor, cardMinor int64, kind string, pick moveFn) (*runResult, error) {
	db, err := b.ceilingDB(conc)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	// No arguments: one round trip with several statements.
	_, err = db.ExecContext(b.ctx, `
		create table accounts (id bigint primary key, balance bigint not null, constrained boolean not null,
			constraint accounts_non_negative check (not constrained or balance >= 0));
		create table entries (id bigserial primary key, kind text not null, ref text, created_at timestamptz not null default now());
		create table postings (entry_id bigint not null references entries (id), source_id bigint not null references accounts (id),
			destination_id bigint not null references accounts (id), amount bigint not null check (amount > 0));`)
	if err != nil {
		return nil, err
	}
	_, err = db.ExecContext(b.ctx, `
		insert into accounts select g, case when g <= $2::bigint then $3::bigint else $4::bigint end, true
		from generate_series(1, $1::bigint) g`, accounts, funded, fundedMinor, cardMinor)
	if err != nil {
		return nil, err
	}
	if _, err := db.ExecContext(b.ctx, "analyze"); err != nil {
		return nil, err
	}
	rngs := newRngs(conc, 7)
	return b.drive(driveSpec{concurrency: conc, duration: b.o.duration, warmup: b.o.warmup, op: func(w, _ int) error {
		debit, credit := pick(rngs[w])
		tx, err := db.BeginTx(b.ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback() //nolint:errcheck
		first, second := debit, credit
		d1, d2 := int64(-1), int64(1)
		if credit < debit {
			first, second, d1, d2 = credit, debit, 1, -1
		}
		if _, err := tx.ExecContext(b.ctx, `update accounts set balance = balance + $2 where id = $1`, first, d1); err != nil {
			return err
		}
		if _, err := tx.ExecContext(b.ctx, `update accounts set balance = balance + $2 where id = $1`, second, d2); err != nil {
			return err
		}
		var id int64
		if err := tx.QueryRowContext(b.ctx, `insert into entries (kind, ref) values ($1, $2) returning id`,
			kind, strconv.FormatInt(credit, 10)).Scan(&id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(b.ctx, `insert into postings values ($1, $2, $3, 1)`, id, debit, credit); err != nil {
			return err
		}
		err = tx.Commit()
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}})
}

// ceilingSpreadTransfers: scenario 1's postings — funding ↔ card of one of
// merchants × cardsPer cards, IN or OUT at random.
func (b *bench) ceilingSpreadTransfers(conc, merchants, cardsPer int) (*runResult, error) {
	return b.ceilingMoves(conc, merchants+merchants*cardsPer, merchants, depositMinor, spreadCardMinor, "CARD_TRANSFER",
		func(rng *mrand.Rand) (int64, int64) {
			m := 1 + rng.IntN(merchants)
			card := int64(merchants + (m-1)*cardsPer + 1 + rng.IntN(cardsPer))
			if rng.IntN(2) == 0 {
				return int64(m), card // IN
			}
			return card, int64(m) // OUT
		})
}

// ceilingHot: every transaction debits account 1 (one funding account),
// the row lock serialises them.
func (b *bench) ceilingHot(conc, cards int) (*runResult, error) {
	return b.ceilingMoves(conc, 1+cards, 1, depositMinor, 0, "CARD_FUND", func(rng *mrand.Rand) (int64, int64) {
		return 1, int64(2 + rng.IntN(cards))
	})
}

// ceilingHolds: an authorization's posting, card available → card held,
// over cards cards (account 2c-1 available, 2c held).
func (b *bench) ceilingHolds(conc, cards int) (*runResult, error) {
	return b.ceilingMoves(conc, 2*cards, 0, 0, spreadCardMinor, "CARD_AUTH", func(rng *mrand.Rand) (int64, int64) {
		c := int64(1 + rng.IntN(cards))
		return 2*c - 1, 2 * c
	})
}

// ceilingBalanceReads: point selects of a card's balance by card number,
// batch at a time (1: one row; more: = any($1)).
func (b *bench) ceilingBalanceReads(conc, cards, batch int) (*runResult, error) {
	db, err := b.ceilingDB(conc)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	_, err = db.ExecContext(b.ctx, `
		create table card_balances (card_no text primary key, balance bigint not null, held bigint not null, currency text not null, status text not null)`)
	if err != nil {
		return nil, err
	}
	_, err = db.ExecContext(b.ctx, `
		insert into card_balances select 'crd_' || lpad(g::text, 20, '0'), 100000, 0, 'USD', 'ACTIVE'
		from generate_series(1, $1::bigint) g`, cards)
	if err != nil {
		return nil, err
	}
	if _, err := db.ExecContext(b.ctx, "vacuum analyze card_balances"); err != nil {
		return nil, err
	}
	cardNo := func(i int) string { return fmt.Sprintf("crd_%020d", i+1) }
	rngs := newRngs(conc, 11)
	return b.drive(driveSpec{concurrency: conc, duration: b.o.duration, warmup: b.o.warmup, op: func(w, _ int) error {
		rng := rngs[w]
		if batch <= 1 {
			var bal, held int64
			var cur, status string
			return db.QueryRowContext(b.ctx, `select balance, held, currency, status from card_balances where card_no = $1`,
				cardNo(rng.IntN(cards))).Scan(&bal, &held, &cur, &status)
		}
		ids := make([]string, batch)
		for i := range ids {
			ids[i] = cardNo(rng.IntN(cards))
		}
		rows, err := db.QueryContext(b.ctx, `select card_no, balance, held, currency, status from card_balances where card_no = any($1)`, ids)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var no, cur, status string
			var bal, held int64
			if err := rows.Scan(&no, &bal, &held, &cur, &status); err != nil {
				return err
			}
		}
		return rows.Err()
	}})
}

func newRngs(n int, seed uint64) []*mrand.Rand {
	rngs := make([]*mrand.Rand, n)
	for i := range rngs {
		rngs[i] = mrand.New(mrand.NewPCG(uint64(i), seed))
	}
	return rngs
}
