package cellaudit

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/paygate/gateway/internal/cells"
)

// cellRows is what the directory checks read of one cell.
type cellRows struct {
	merchants  []cellMerchant
	tombstones []tombstone
	arriving   map[int64]bool // merchants whose copy into this cell is under way
}

type cellMerchant struct {
	ID     int64  `bun:"id"`
	ShopNo string `bun:"shop_no"`
}

type tombstone struct {
	ShopNo     string `bun:"shop_no"`
	MerchantID int64  `bun:"merchant_id"`
	LastSeq    int64  `bun:"last_seq"`
	LastHash   []byte `bun:"last_hash"`
	ToCell     string `bun:"to_cell"`
	Removed    bool   `bun:"removed"`
}

func readCell(ctx context.Context, c Cell) (cellRows, error) {
	var r cellRows
	if err := c.DB.NewRaw("select id, shop_no from merchants order by id").Scan(ctx, &r.merchants); err != nil {
		return r, fmt.Errorf("cell %s: merchants: %w", c.Name, err)
	}
	if err := c.DB.NewRaw(`select shop_no, merchant_id, last_seq, last_hash, to_cell, removed_at is not null as removed
		from cellmove_tombstones order by move_id`).Scan(ctx, &r.tombstones); err != nil {
		return r, fmt.Errorf("cell %s: tombstones: %w", c.Name, err)
	}
	var arriving []int64
	if err := c.DB.NewRaw("select merchant_id from cellmove_arrivals where state = 'copying'").Scan(ctx, &arriving); err != nil {
		return r, fmt.Errorf("cell %s: arrivals: %w", c.Name, err)
	}
	r.arriving = map[int64]bool{}
	for _, id := range arriving {
		r.arriving[id] = true
	}
	return r, nil
}

// mayHold reports whether a merchant placed elsewhere may still have
// rows in this cell: its copy is arriving here, or it left and its
// removal here has not run yet (an open tombstone).
func (r cellRows) mayHold(id int64) bool {
	if r.arriving[id] {
		return true
	}
	for _, t := range r.tombstones {
		if t.MerchantID == id && !t.Removed {
			return true
		}
	}
	return false
}

// Directory checks the cells against the directory's entries: every
// merchant of the directory is in its cell; every merchant of a cell is in
// the directory, in that cell, under the same id, or is one a move may
// leave there (a merchant moving, arriving or not yet removed); no shop
// number, merchant id or PAN fingerprint is in two cells otherwise; every
// tombstone's last hash is the hash at that sequence of its merchant's
// chain where the directory now places it.
func Directory(ctx context.Context, entries []cells.Entry, cs []Cell) ([]Problem, error) {
	rows := make(map[string]cellRows, len(cs))
	for _, c := range cs {
		r, err := readCell(ctx, c)
		if err != nil {
			return nil, err
		}
		rows[c.Name] = r
	}
	byShop := make(map[string]cells.Entry, len(entries))
	byID := make(map[int64]cells.Entry, len(entries))
	for _, e := range entries {
		byShop[e.ShopNo], byID[e.MerchantID] = e, e
	}
	var ps []Problem
	ps = append(ps, placed(entries, cs, rows)...)
	ps = append(ps, stray(byShop, byID, cs, rows)...)
	cardPs, err := duplicateCards(ctx, byID, cs, rows)
	if err != nil {
		return nil, err
	}
	ps = append(ps, cardPs...)
	tombPs, err := tombstones(ctx, byShop, cs, rows)
	if err != nil {
		return nil, err
	}
	return append(ps, tombPs...), nil
}

// placed: every merchant of the directory is in the cell it names.
func placed(entries []cells.Entry, cs []Cell, rows map[string]cellRows) []Problem {
	var ps []Problem
	for _, e := range entries {
		r, ok := rows[e.Cell]
		if !ok {
			ps = append(ps, Problem{Check: CheckPlacement, Shop: e.ShopNo,
				Detail: fmt.Sprintf("the directory places it in cell %s, which is not one of the cells verified (%s)", e.Cell, names(cs))})
			continue
		}
		if !slices.Contains(r.merchants, cellMerchant{ID: e.MerchantID, ShopNo: e.ShopNo}) {
			ps = append(ps, Problem{Check: CheckPlacement, Cell: e.Cell, Shop: e.ShopNo,
				Detail: fmt.Sprintf("the directory places merchant %d in cell %s, which has no such merchant", e.MerchantID, e.Cell)})
		}
	}
	return ps
}

// stray: every merchant of a cell is the directory's there, or one a move
// may leave there; otherwise it is unplaced, or in two cells.
func stray(byShop map[string]cells.Entry, byID map[int64]cells.Entry, cs []Cell, rows map[string]cellRows) []Problem {
	var ps []Problem
	for _, c := range cs {
		r := rows[c.Name]
		for _, m := range r.merchants {
			e, found := byShop[m.ShopNo]
			if !found {
				e, found = byID[m.ID]
			}
			switch {
			case !found:
				ps = append(ps, Problem{Check: CheckPlacement, Cell: c.Name, Shop: m.ShopNo,
					Detail: fmt.Sprintf("merchant %d of cell %s is not in the directory (a creation cut short: `gateway cells init` places it)", m.ID, c.Name)})
			case e.ShopNo != m.ShopNo || e.MerchantID != m.ID:
				ps = append(ps, Problem{Check: CheckDuplicate, Cell: c.Name, Shop: m.ShopNo,
					Detail: fmt.Sprintf("cell %s has %s as merchant %d; the directory has %s as merchant %d in cell %s",
						c.Name, m.ShopNo, m.ID, e.ShopNo, e.MerchantID, e.Cell)})
			case e.Cell != c.Name && e.State != cells.StateMoving && !r.mayHold(m.ID):
				ps = append(ps, Problem{Check: CheckDuplicate, Cell: c.Name, Shop: m.ShopNo,
					Detail: fmt.Sprintf("merchant %d is in cell %s and in cell %s, where the directory places it; no move explains it", m.ID, c.Name, e.Cell)})
			}
		}
	}
	return ps
}

// tombstones: every tombstone's last hash is, at its sequence, the hash of
// its merchant's chain in the cell the directory places it in now (its new
// cell, or one it moved on to: the chain goes with it).
func tombstones(ctx context.Context, byShop map[string]cells.Entry, cs []Cell, rows map[string]cellRows) ([]Problem, error) {
	dbs := make(map[string]Cell, len(cs))
	for _, c := range cs {
		dbs[c.Name] = c
	}
	var ps []Problem
	for _, c := range cs {
		for _, t := range rows[c.Name].tombstones {
			bad := func(format string, args ...any) {
				ps = append(ps, Problem{Check: CheckTombstone, Cell: c.Name, Shop: t.ShopNo, Detail: fmt.Sprintf(format, args...)})
			}
			e, found := byShop[t.ShopNo]
			now, open := dbs[e.Cell]
			switch {
			case !found || e.MerchantID != t.MerchantID:
				bad("the tombstone of merchant %d (moved to %s) names a merchant the directory does not have", t.MerchantID, t.ToCell)
				continue
			case e.Cell == c.Name && e.State != cells.StateMoving:
				continue // it came back: the chain here is checked by the cell's own verify
			case !open:
				continue // its cell now is not among those verified (placed names it)
			case t.LastSeq == 0:
				continue // moved before its first entry: no hash to compare
			}
			var hash []byte
			err := now.DB.NewRaw("select hash from entries where merchant_id = ? and merchant_seq = ?", t.MerchantID, t.LastSeq).
				Scan(ctx, &hash)
			if errors.Is(err, sql.ErrNoRows) {
				bad("the tombstone's last sequence %d of merchant %d is not in its chain in cell %s", t.LastSeq, t.MerchantID, e.Cell)
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("cell %s: entries: %w", e.Cell, err)
			}
			if subtle.ConstantTimeCompare(hash, t.LastHash) != 1 { // no secret, but the rule is one rule
				bad("the tombstone says merchant %d's entry %d has hash %s; in cell %s it has %s",
					t.MerchantID, t.LastSeq, short(t.LastHash), e.Cell, short(hash))
			}
		}
	}
	return ps, nil
}

func short(b []byte) string {
	h := hex.EncodeToString(b)
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return h
}

func names(cs []Cell) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return strings.Join(out, ", ")
}
