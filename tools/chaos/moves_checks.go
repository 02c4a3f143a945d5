package main

import (
	"bytes"
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// Where a moved merchant is after its move, read from outside: never
// half-done. The merchant is in exactly one cell in the directory, active;
// its rows are in that cell and none in the other, which holds only a
// tombstone (moved) or nothing (rolled back); moved, the journal it
// arrived with ends where the source's ended (the tombstone's sequence
// and hash are an entry of the target, the head at or past it).

// merchantRowTables are tables every merchant has rows in: the merchant,
// its head, its accounts, its journal, its cards.
var merchantRowTables = []string{"merchants", "ledger_heads", "accounts", "entries", "cards"}

// merchantRows counts the merchant's rows in each of merchantRowTables.
func merchantRows(ctx context.Context, db bun.IDB, merchant int64) (map[string]int, error) {
	out := map[string]int{}
	for _, t := range merchantRowTables {
		col := "merchant_id"
		if t == "merchants" {
			col = "id"
		}
		var n int
		// t and col are this file's constants.
		if err := db.NewRaw("select count(*) from "+t+" where "+col+" = ?", merchant).Scan(ctx, &n); err != nil {
			return nil, fmt.Errorf("%s: %w", t, err)
		}
		out[t] = n
	}
	return out, nil
}

// placement is the check of one merchant after a move that ended moved
// (into `in`, from `out`) or rolled back (in its source `in`, the target
// `out`). dir is the directory's database (the home cell).
type placement struct {
	dir          bun.IDB
	in, out      *cellStack
	m            *merchant
	moved        bool
	headChecked  bool // the tombstone's head found in the target's journal
	tombstoneSeq int64
}

func (p *placement) check(ctx context.Context, add func(string, ...any)) {
	var cell, state string
	if err := p.dir.NewRaw("select cell, state from cell_directory where shop_no = ?", p.m.shopNo).Scan(ctx, &cell, &state); err != nil {
		add("the directory's row of %s: %v", p.m.shopNo, err)
	} else if cell != p.in.name || state != "active" {
		add("the directory places %s in %s (%s), want %s active", p.m.shopNo, cell, state, p.in.name)
	}
	inRows, err := merchantRows(ctx, p.in.db, p.m.id)
	if err != nil {
		add("counting %s's rows in %s: %v", p.m.shopNo, p.in.name, err)
	}
	outRows, err := merchantRows(ctx, p.out.db, p.m.id)
	if err != nil {
		add("counting %s's rows in %s: %v", p.m.shopNo, p.out.name, err)
	}
	for _, t := range merchantRowTables {
		if inRows[t] == 0 {
			add("%s has no %s row of %s, its cell", p.in.name, t, p.m.shopNo)
		}
		if outRows[t] != 0 {
			add("%s still has %d %s rows of %s, which is in %s", p.out.name, outRows[t], t, p.m.shopNo, p.in.name)
		}
	}
	// The other cell's trail: a tombstone (removed) after a move, and the
	// arrival's record; nothing of it after a roll-back but the records.
	var tombs int
	var seq int64
	var hash []byte
	var removed bool
	src, dst := p.out, p.in
	if !p.moved {
		src, dst = p.in, p.out
	}
	if err := src.db.NewRaw(`select count(*) over (), last_seq, last_hash, removed_at is not null from cellmove_tombstones
		where shop_no = ? order by move_id desc limit 1`, p.m.shopNo).Scan(ctx, &tombs, &seq, &hash, &removed); err != nil && p.moved {
		add("the tombstone of %s in %s: %v", p.m.shopNo, src.name, err)
	}
	var arrival string
	_ = dst.db.NewRaw(`select state from cellmove_arrivals where merchant_id = ? order by id desc limit 1`, p.m.id).Scan(ctx, &arrival)
	if !p.moved {
		if tombs != 0 {
			add("%s was rolled back but %s has a tombstone of it", p.m.shopNo, src.name)
		}
		if arrival != "rolled_back" {
			add("%s was rolled back but its arrival in %s is %q", p.m.shopNo, dst.name, arrival)
		}
		return
	}
	if tombs != 1 || !removed {
		add("%s in %s: %d tombstones (the latest removed: %v), want one, removed", p.m.shopNo, src.name, tombs, removed)
	}
	if arrival != "arrived" {
		add("the arrival of %s in %s is %q, want arrived", p.m.shopNo, dst.name, arrival)
	}
	// The head the source had at the switch is an entry of the target's
	// chain, and the target's head is at or past it.
	var got []byte
	var head int64
	if err := dst.db.NewRaw("select e.hash, h.last_seq from entries e join ledger_heads h on h.merchant_id = e.merchant_id where e.merchant_id = ? and e.merchant_seq = ?",
		p.m.id, seq).Scan(ctx, &got, &head); err != nil {
		add("the entry %d of %s (the tombstone's head) in %s: %v", seq, p.m.shopNo, dst.name, err)
	} else if !bytes.Equal(got, hash) || head < seq {
		add("%s in %s: entry %d hashes %x, the source's head at the switch %x (target head %d)", p.m.shopNo, dst.name, seq, got, hash, head)
	} else {
		p.headChecked, p.tombstoneSeq = true, seq
	}
}
