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
// cell number's range. It refuses a database that already holds a merchant
// outside that range (made before the database became a cell): its ids
// could collide with another cell's.
func StartIDsInCell(ctx context.Context, db bun.IDB, number int) error {
	from, to := int64(number)*CellIDSpan, int64(number+1)*CellIDSpan
	var outside int64
	if err := db.NewRaw("select count(*) from merchants where id < ? or id >= ?", from, to).Scan(ctx, &outside); err != nil {
		return err
	}
	if outside > 0 {
		return fmt.Errorf("the database holds %d merchants whose ids are outside cell %d's range [%d, %d)", outside, number, from, to)
	}
	var last int64
	if err := db.NewRaw("select coalesce(max(id), 0) from merchants").Scan(ctx, &last); err != nil {
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

// CheckIDsInCell reports an error unless db's next merchant id and every
// merchant's id are in cell number's range: checked at every start of a
// cell, so that a restore or a mistaken init cannot mint another cell's ids.
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
	if lo < from || hi >= to || next < from || next >= to {
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
