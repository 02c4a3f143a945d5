package merchant

import (
	"context"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// The merchants table's SQL that the card domain runs (issue 28 point 2:
// each table's SQL lives in its owner, internal/archtest tables_test.go).
//
// The card writer's batch reads a merchant's status, currencies and KYB
// tier with the head lock, inside its own statements (the cards with their
// merchant's status, the BIN access with its currencies, the limits with
// its tier): one round trip of reads per batch, which a call to this
// package's Go API per merchant would multiply. So this package writes the
// probe itself and cards places it in its statement: the text is the same
// as it was inline, so the plans (one probe of merchants_pkey per row,
// kept by "offset 0" whatever the statistics) and rows 1 and 3 of the bench
// are unchanged.

// Probe is a subquery reading cols of the merchant whose id is the SQL
// expression id (a column of the caller's statement, or a bind
// placeholder), one probe of merchants_pkey, for a lateral join aliased m:
//
//	cross join lateral ` + merchant.Probe(merchant.ProbeStatus, "c.merchant_id") + ` m
//
// cols is one of the Probe* lists below; id is the caller's constant SQL,
// never a value.
func Probe(cols ProbeColumns, id string) string {
	return "(select " + string(cols) + " from merchants m where m.id = " + id + " offset 0)"
}

// ProbeColumns is a column list of Probe.
type ProbeColumns string

// The column lists the card domain reads.
const (
	// ProbeStatus is the merchant's status (ACTIVE or DISABLED).
	ProbeStatus ProbeColumns = "m.status"
	// ProbeTier is the merchant's id and KYB tier.
	ProbeTier ProbeColumns = "m.id, m.kyb_tier"
	// ProbeCurrencies is the merchant's id and currencies.
	ProbeCurrencies ProbeColumns = "m.id, m.currencies"
)

// KYBTier reads merchant id's KYB tier on db (the pool or the caller's
// transaction). Errors are the driver's (sql.ErrNoRows for no merchant):
// the caller maps them.
func KYBTier(ctx context.Context, db bun.IDB, id int64) (string, error) {
	var tier string
	err := db.NewRaw(`select kyb_tier from merchants where id = ?`, id).Scan(ctx, &tier)
	return tier, err
}

// SetKYBTier sets merchant id's KYB tier in the caller's transaction tx
// and returns its currencies (the card domain resets its limits in each,
// in the same transaction). Errors are the driver's: the caller maps them.
// The caller tells the merchant service of the change (MerchantChanged).
func SetKYBTier(ctx context.Context, tx bun.IDB, id int64, tier string) ([]string, error) {
	var currencies []string
	err := tx.NewRaw(`update merchants set kyb_tier = ? where id = ? returning currencies`, tier, id).
		Scan(ctx, pgdialect.Array(&currencies))
	return currencies, err
}
