package merchant

import (
	"context"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/ledger"
)

// Brief is what another package's list shows of a merchant: its shop
// number, its status and whether it is a test merchant.
type Brief struct {
	ID     int64  `bun:"id"`
	ShopNo string `bun:"shop_no"`
	Status string `bun:"status"`
	Test   bool   `bun:"test"`
}

// Briefs reads the merchants of ids in one statement (a primary-key probe
// each), on db: the pool, or a transaction of the caller. A package that
// lists its own rows across merchants (the stuck remittances, the holds
// near expiry) reads them first and then their merchants here, one round
// trip for the page, rather than joining the merchants table, which is
// this package's (internal/archtest, tableOwners). An id with no merchant
// is not in the map.
func Briefs(ctx context.Context, db bun.IDB, ids []int64) (map[int64]Brief, error) {
	out := make(map[int64]Brief, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []Brief
	err := db.NewRaw(`select m.id, m.shop_no, m.status, m.test
		from unnest(?::bigint[]) as v(id)
		cross join lateral (select * from merchants m where m.id = v.id offset 0) m`,
		pgdialect.Array(ledger.UniqueSorted(ids))).Scan(ctx, &rows)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	for _, r := range rows {
		out[r.ID] = r
	}
	return out, nil
}
