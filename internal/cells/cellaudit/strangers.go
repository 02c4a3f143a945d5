package cellaudit

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/cells"
)

// strangers names each merchant of a cell whose id is outside the cell's
// range and that no move brought here (no arrival row copying or arrived):
// a merchant minted by another cell may live here only by a move
// (docs/scaling.md). cells.Check accepts every cell's range, because a
// moved-in merchant keeps its id; this is the half of the identity check
// that tells a move from a row copied by hand.
func strangers(ctx context.Context, db bun.IDB, cell string, number int) ([]Problem, error) {
	from, to := cells.IDRange(number)
	var rows []struct {
		ID     int64  `bun:"id"`
		ShopNo string `bun:"shop_no"`
	}
	if err := db.NewRaw(`select m.id, m.shop_no from merchants m
		where (m.id < ? or m.id >= ?)
		  and not exists (select 1 from cellmove_arrivals a where a.merchant_id = m.id and a.state in ('copying', 'arrived'))
		order by m.id`, from, to).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("cell %s: merchants outside its range: %w", cell, err)
	}
	var ps []Problem
	for _, r := range rows {
		ps = append(ps, Problem{Check: CheckIdentity, Cell: cell, Shop: r.ShopNo,
			Detail: fmt.Sprintf("merchant %d is not in cell %d's range [%d, %d) and no move brought it here", r.ID, number, from, to)})
	}
	return ps, nil
}
