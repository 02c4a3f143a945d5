package merchant

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// CellIDSpan is how many merchant ids each cell owns: cell n mints ids
// from n × CellIDSpan, so that merchant ids are unique across cells by
// construction (docs/scaling.md, "Ids"). The id is inside every entry's
// hash and every account address, and a move keeps it.
const CellIDSpan int64 = 1_000_000_000_000

// InCell makes s mint the shop numbers of cell number (1–9): their first
// digit. Call it once, before the service is used (internal/app/services).
func (s *Service) InCell(number int) { s.cellNumber = number }

// StartIDsInCell points the merchants' id sequence of db at the start of
// cell number's range, or past the last merchant minted in it. It refuses
// a database that already holds a merchant in no cell's range (made before
// the database became a cell): its ids could collide with another cell's.
// A merchant in another cell's range is one that moved in (internal/cellmove
// keeps its id): it is neither refused nor counted as minted here, so a
// merchant moved in from a later cell does not push the sequence into that
// cell's range.
func StartIDsInCell(ctx context.Context, db bun.IDB, number int) error {
	from, to := int64(number)*CellIDSpan, int64(number+1)*CellIDSpan
	var outside int64
	if err := db.NewRaw("select count(*) from merchants where id < ? or id >= ?", anyCellFrom, anyCellTo).Scan(ctx, &outside); err != nil {
		return err
	}
	if outside > 0 {
		return fmt.Errorf("the database holds %d merchants whose ids are outside cell %d's range [%d, %d) and every other cell's", outside, number, from, to)
	}
	var last int64
	if err := db.NewRaw("select coalesce(max(id), 0) from merchants where id >= ? and id < ?", from, to).Scan(ctx, &last); err != nil {
		return err
	}
	// setval needs only the sequence's UPDATE, which the serving role has:
	// no ALTER TABLE on merchants. Without merchants the next id is the
	// range's first; with some, the one after the last.
	next, called := from, false
	if last >= from {
		next, called = last, true
	}
	_, err := db.NewRaw("select setval(pg_get_serial_sequence('merchants', 'id'), ?, ?)", next, called).Exec(ctx)
	return err
}

// anyCellFrom and anyCellTo bound every cell's ids: cells are numbered
// 1–9 (cells.Identity).
const anyCellFrom, anyCellTo = CellIDSpan, 10 * CellIDSpan

// CheckIDsInCell reports an error unless db's next merchant id is in cell
// number's range and every merchant's id in some cell's: checked at every
// start of a cell, so that a restore or a mistaken init cannot mint another
// cell's ids. A merchant moved in from another cell keeps its id, in that
// cell's range (internal/cellmove): requiring every id in this cell's range
// made every cell a merchant had moved into refuse to start (serve, audit
// verify over cells), found by chaos `move`.
func CheckIDsInCell(ctx context.Context, db bun.IDB, number int) error {
	from, to := int64(number)*CellIDSpan, int64(number+1)*CellIDSpan
	var last int64
	var called bool
	if err := db.NewRaw("select last_value, is_called from merchants_id_seq").Scan(ctx, &last, &called); err != nil {
		return fmt.Errorf("reading the merchants' id sequence: %w", err)
	}
	next := last
	if called {
		next++
	}
	var lo, hi int64
	if err := db.NewRaw("select coalesce(min(id), ?), coalesce(max(id), ?) from merchants", from, from).Scan(ctx, &lo, &hi); err != nil {
		return err
	}
	if lo < anyCellFrom || hi >= anyCellTo || next < from || next >= to {
		return fmt.Errorf("merchant ids are not in cell %d's range [%d, %d): run `gateway cells init` on a database made for this cell",
			number, from, to)
	}
	return nil
}

// Placed is a merchant as the directory of cells places it.
type Placed struct {
	ShopNo string `bun:"shop_no"`
	ID     int64  `bun:"id"`
}

// AllPlaced is every merchant of db, by id: what `gateway cells init`
// places in the directory when a cell has a merchant the directory lacks
// (a creation stopped between its two writes).
func AllPlaced(ctx context.Context, db bun.IDB) ([]Placed, error) {
	var out []Placed
	err := db.NewRaw("select shop_no, id from merchants order by id").Scan(ctx, &out)
	return out, err
}
