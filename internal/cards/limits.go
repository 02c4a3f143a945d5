package cards

import (
	"context"
	"database/sql"
	"errors"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/fx"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Limit is a merchant's limits in one currency, minor units.
type Limit struct {
	Currency          string `json:"currency"`
	CardBalanceMax    int64  `json:"cardBalanceMax"`    // the largest available balance of one card
	DailyCardIssueMax int64  `json:"dailyCardIssueMax"` // card funding per UTC day
	DailyCardIssued   int64  `json:"dailyCardIssued"`   // used so far today
	RemittanceMax     int64  `json:"remittanceMax"`     // the largest single remittance
}

// KYB tiers with their default limits (docs/cards.md), in USD minor units;
// other currencies take the same figure converted at the current rate.
const (
	KYBTier1 = "TIER_1"
	KYBTier2 = "TIER_2"
	KYBTier3 = "TIER_3"
)

// Default limits of each KYB tier, in USD minor units: the largest card
// balance and the card funding per UTC day. Other currencies get the same
// value converted at the current USD rate (docs/cards.md).
var tierLimitsUSD = map[string]struct{ cardBalanceMax, dailyCardIssueMax, remittanceMax int64 }{
	KYBTier1: {10_000_00, 50_000_00, 5_000_00},
	KYBTier2: {100_000_00, 500_000_00, 50_000_00},
	KYBTier3: {1_000_000_00, 10_000_000_00, 1_000_000_00},
}

// setupMerchant starts a new merchant in TIER_1 (the column's default) with
// that tier's limits in each of its currencies, written in the transaction
// that creates it (Domain.MerchantSetup).
func setupMerchant(ctx context.Context, db bun.IDB, m *ledger.Merchant) error {
	return resetLimits(ctx, db, m.ID, KYBTier1, m.Currencies)
}

// limitRow is a merchant_limits row.
type limitRow struct {
	cardBalanceMax, dailyCardIssueMax int64
	remittanceMax                     *int64 // NULL: the tier's
}

// limitFor reads the limit in currency of merchant m, of KYB tier tier,
// outside any batch.
func limitFor(ctx context.Context, db bun.IDB, m int64, tier, currency string) (*Limit, error) {
	var row limitRow
	err := db.NewRaw(`select card_balance_max, daily_card_issue_max, remittance_max from merchant_limits where merchant_id = ? and currency = ?`,
		m, currency).Scan(ctx, &row.cardBalanceMax, &row.dailyCardIssueMax, &row.remittanceMax)
	if errors.Is(err, sql.ErrNoRows) {
		return limitFrom(ctx, db, tier, currency, nil)
	}
	if err != nil {
		return nil, ledger.MapError(err)
	}
	return limitFrom(ctx, db, tier, currency, &row)
}

// limitOutside reads the tier and the limit in currency of merchant m, one
// the batch did not read with its head.
func limitOutside(ctx context.Context, db bun.IDB, m int64, currency string) (*Limit, error) {
	tier, err := merchant.KYBTier(ctx, db, m)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	return limitFor(ctx, db, m, tier, currency)
}

// limitFrom is the limit in currency of a merchant of KYB tier tier from its
// merchant_limits row, or the tier's defaults when it has none.
func limitFrom(ctx context.Context, db bun.IDB, tier, currency string, row *limitRow) (*Limit, error) {
	def, err := tierLimit(ctx, db, tier, currency)
	if err != nil || row == nil {
		return def, err
	}
	lim := &Limit{Currency: currency, CardBalanceMax: row.cardBalanceMax, DailyCardIssueMax: row.dailyCardIssueMax,
		RemittanceMax: def.RemittanceMax}
	if row.remittanceMax != nil {
		lim.RemittanceMax = *row.remittanceMax
	}
	return lim, nil
}

// tierLimit converts a tier's USD limits into currency.
func tierLimit(ctx context.Context, db bun.IDB, tier, currency string) (*Limit, error) {
	t, ok := tierLimitsUSD[tier]
	if !ok {
		return nil, postings.FieldErrorf("tier", "must be one of TIER_1, TIER_2, TIER_3")
	}
	lim := &Limit{Currency: currency, CardBalanceMax: t.cardBalanceMax, DailyCardIssueMax: t.dailyCardIssueMax, RemittanceMax: t.remittanceMax}
	if currency == "USD" {
		return lim, nil
	}
	to, err := postings.LookupCurrency(currency)
	if err != nil {
		return nil, err
	}
	// A limit is what the merchant may move: converted, it rounds down
	// (fx.USDFigure).
	for _, v := range []*int64{&lim.CardBalanceMax, &lim.DailyCardIssueMax, &lim.RemittanceMax} {
		if *v, err = fx.USDFigure(ctx, db, *v, to); err != nil {
			return nil, err
		}
	}
	return lim, nil
}

// resetLimits writes the tier's limits for each currency.
func resetLimits(ctx context.Context, db bun.IDB, merchant int64, tier string, currencies []string) error {
	for _, cur := range currencies {
		lim, err := tierLimit(ctx, db, tier, cur)
		if err != nil {
			return err
		}
		_, err = db.NewRaw(`
			insert into merchant_limits (merchant_id, currency, card_balance_max, daily_card_issue_max)
			values (?, ?, ?, ?)
			on conflict (merchant_id, currency) do update
			set card_balance_max = excluded.card_balance_max, daily_card_issue_max = excluded.daily_card_issue_max,
			    remittance_max = null`,
			merchant, cur, lim.CardBalanceMax, lim.DailyCardIssueMax).Exec(ctx)
		if err != nil {
			return ledger.MapError(err)
		}
	}
	return nil
}

// stmtLoadLimits reads each merchant's KYB tier with its merchant_limits
// rows, one row with no currency for a merchant that has none: the tier is
// the card domain's (SetKYBTier), not the journal's, so it is read here
// rather than with the head.
var stmtLoadLimits = ledger.NewStmt(`
	select m.id, m.kyb_tier, l.currency, l.card_balance_max, l.daily_card_issue_max, l.remittance_max
	from unnest($1::bigint[]) as v(m)
	cross join lateral ` + merchant.Probe(merchant.ProbeTier, "v.m") + ` m
	left join lateral (select * from merchant_limits l where l.merchant_id = v.m offset 0) l on true`)

// queueLimits queues the read of the merchants' tiers and limits in every
// currency, with the head lock: most commands check one.
func (b *batch) queueLimits(p *ledger.Pipeline, merchants []int64) {
	p.Query(stmtLoadLimits, func(rows pgx.Rows) error {
		for rows.Next() {
			var m int64
			var tier string
			var cur *string
			var balanceMax, issueMax *int64
			r := &limitRow{}
			if err := rows.Scan(&m, &tier, &cur, &balanceMax, &issueMax, &r.remittanceMax); err != nil {
				return err
			}
			b.tiers[m] = tier
			if cur == nil {
				continue // no merchant_limits row: the tier's defaults
			}
			r.cardBalanceMax, r.dailyCardIssueMax = *balanceMax, *issueMax
			b.limitRows[strconv.FormatInt(m, 10)+":"+*cur] = r
		}
		for _, m := range merchants {
			b.limitsRead[m] = true
		}
		return nil
	}, merchants)
}

// limit returns m's limits in currency, as seen by this batch.
func (b *batch) limit(tx *ledger.Tx, m *ledger.Merchant, currency string) (*Limit, error) {
	k := strconv.FormatInt(m.ID, 10) + ":" + currency
	if lim, ok := b.limits[k]; ok {
		c := *lim
		return &c, nil
	}
	var lim *Limit
	var err error
	if b.limitsRead[m.ID] {
		// Read with the head lock; absent rows mean the tier's defaults.
		lim, err = limitFrom(tx.Context(), tx.DB(), b.tiers[m.ID], currency, b.limitRows[k])
	} else {
		lim, err = limitOutside(tx.Context(), tx.DB(), m.ID, currency)
	}
	if err != nil {
		return nil, err
	}
	b.limits[k] = lim
	c := *lim
	return &c, nil
}

// LimitOf returns m's limits in currency as the batch sees them (the
// remittance domain checks RemittanceMax).
func LimitOf(tx *ledger.Tx, m *ledger.Merchant, currency string) (*Limit, error) {
	return batchOf.Of(tx).limit(tx, m, currency)
}

// The operator's changes to limits. They change configuration, never
// money, so they are plain statements outside the writer; the writer reads
// limits under the merchant's head lock, so a change applies from the next
// batch on.

// SetKYBTier sets a merchant's KYB tier and resets its limits in every
// currency to the tier's defaults.
func (s *Service) SetKYBTier(ctx context.Context, id int64, tier string) error {
	if _, ok := tierLimitsUSD[tier]; !ok {
		return postings.FieldErrorf("tier", "must be one of TIER_1, TIER_2, TIER_3")
	}
	defer s.merchants.MerchantChanged(id)
	return s.l.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		currencies, err := merchant.SetKYBTier(ctx, tx, id, tier)
		if err != nil {
			return ledger.MapError(err)
		}
		return resetLimits(ctx, tx, id, tier, currencies)
	})
}

// SetLimit sets a merchant's limits in one currency, in minor units.
func (s *Service) SetLimit(ctx context.Context, merchant int64, currency string, cardBalanceMax, dailyCardIssueMax int64) error {
	if _, err := postings.LookupCurrency(currency); err != nil {
		return err
	}
	if cardBalanceMax < 0 || dailyCardIssueMax < 0 {
		return postings.FieldErrorf("limit", "limits cannot be negative")
	}
	_, err := s.l.DB().NewRaw(`
		insert into merchant_limits (merchant_id, currency, card_balance_max, daily_card_issue_max)
		values (?, ?, ?, ?)
		on conflict (merchant_id, currency) do update
		set card_balance_max = excluded.card_balance_max, daily_card_issue_max = excluded.daily_card_issue_max`,
		merchant, currency, cardBalanceMax, dailyCardIssueMax).Exec(ctx)
	return ledger.MapError(err)
}
