package merchant

import (
	"context"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Brief is what another package's rows need of their merchant: its shop
// number, its status, whether it is a test merchant, and its callback URL
// ("" when it has none).
type Brief struct {
	ID          int64  `bun:"id"`
	ShopNo      string `bun:"shop_no"`
	Status      string `bun:"status"`
	Test        bool   `bun:"test"`
	CallbackURL string `bun:"callback_url"`
}

// Briefs reads the merchants of ids in one statement (a primary-key probe
// each), on db: the pool, or a transaction of the caller. A package that
// lists its own rows across merchants (the stuck remittances, the holds
// near expiry) reads them first and then their merchants here, one round
// trip for the page, rather than joining the merchants table, which is
// this package's (internal/archtest, tableOwners). An id with no merchant
// is not in the map.
func Briefs(ctx context.Context, db bun.IDB, ids []int64) (map[int64]Brief, error) {
	return byID(ctx, db, `m.id, m.shop_no, m.status, m.test, coalesce(m.callback_url, '') as callback_url`, ids,
		func(b Brief) int64 { return b.ID })
}

// byID reads columns of the merchants ids, each once, by primary key (offset
// 0 keeps each a probe whatever the statistics), into a map by id.
func byID[T any](ctx context.Context, db bun.IDB, columns string, ids []int64, id func(T) int64) (map[int64]T, error) {
	out := make(map[int64]T, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []T
	err := db.NewRaw(`select `+columns+`
		from unnest(?::bigint[]) as v(id)
		cross join lateral (select * from merchants m where m.id = v.id offset 0) m`,
		pgdialect.Array(ledger.UniqueSorted(ids))).Scan(ctx, &rows)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	for _, r := range rows {
		out[id(r)] = r
	}
	return out, nil
}

// Brief1 is the merchant id's Brief; ENOTFOUND merchant when there is none.
func Brief1(ctx context.Context, db bun.IDB, id int64) (Brief, error) {
	ms, err := Briefs(ctx, db, []int64{id})
	if err != nil {
		return Brief{}, err
	}
	m, ok := ms[id]
	if !ok {
		return Brief{}, postings.ReasonErrorf(postings.ENOTFOUND, postings.ReasonMerchant, "merchant not found")
	}
	return m, nil
}

// SealedKeys are a merchant's signing keys as stored: sealed under its shop
// number (Sealer.OpenSigningKey), the previous one with the end of its
// roll's overlap (nil outside one).
type SealedKeys struct {
	ID         int64      `bun:"id"`
	ShopNo     string     `bun:"shop_no"`
	Sealed     []byte     `bun:"private_key_sealed"`
	PrevSealed []byte     `bun:"private_key_prev_sealed"`
	PrevUntil  *time.Time `bun:"private_key_prev_until"`
}

// SigningKeys reads the sealed signing keys of the merchants ids in one
// statement, for the callbacks' dispatcher: one batch read per claim of
// deliveries (not one per delivery), where the claim used to join the
// merchants table itself.
func SigningKeys(ctx context.Context, db bun.IDB, ids []int64) (map[int64]SealedKeys, error) {
	return byID(ctx, db, `m.id, m.shop_no, m.private_key_sealed, m.private_key_prev_sealed, m.private_key_prev_until`, ids,
		func(k SealedKeys) int64 { return k.ID })
}

// NameShops sets the shop number of each of rows from its merchant id (one
// batch read, Briefs): for a page of rows across merchants.
func NameShops[T any](ctx context.Context, db bun.IDB, rows []T, merchantOf func(*T) int64, setShop func(*T, string)) error {
	if len(rows) == 0 {
		return nil
	}
	ids := make([]int64, len(rows))
	for i := range rows {
		ids[i] = merchantOf(&rows[i])
	}
	ms, err := Briefs(ctx, db, ids)
	if err != nil {
		return err
	}
	for i := range rows {
		setShop(&rows[i], ms[ids[i]].ShopNo)
	}
	return nil
}
