package cards

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// FundingBalance is a funding account's balance.
type FundingBalance struct {
	Currency string `json:"currency"`
	Balance  int64  `json:"balance"`
}

// Receivable is what a merchant's cards owe in one currency, zero or more
// (the sum of their receivables, see Card.Receivable).
type Receivable struct {
	Currency string `json:"currency"`
	Amount   int64  `json:"amount"`
}

// Profile is the merchant account profile of GET /shop/account: the
// merchant, its funding balances, what its cards owe, and its limits with
// the day's card loads.
type Profile struct {
	Merchant            merchant.Merchant `json:"merchant"`
	KYBTier             string            `json:"kybTier"`
	Balances            []FundingBalance  `json:"balances"`
	Receivables         []Receivable      `json:"receivables"` // one per currency of Balances, then any other
	Limits              []Limit           `json:"limits"`
	LastAuthenticatedAt *time.Time        `json:"lastAuthenticatedAt,omitempty"`
}

// Profile returns the merchant account profile.
func (s *Service) Profile(ctx context.Context, merchant int64) (*Profile, error) {
	m, err := s.merchants.MerchantByID(ctx, merchant)
	if err != nil {
		return nil, err
	}
	p := &Profile{Merchant: *m, KYBTier: m.KYBTier, LastAuthenticatedAt: s.merchants.LastAuthenticatedAt(m)}
	bals, err := s.books.Balances(ctx, merchant, postings.AccountFunding)
	if err != nil {
		return nil, err
	}
	byCur := map[string]int64{}
	for _, b := range bals {
		byCur[b.Account.Currency] = b.Balance
	}
	db := s.l.DB()
	day := s.l.Now().Format("2006-01-02")
	for _, cur := range m.Currencies {
		p.Balances = append(p.Balances, FundingBalance{Currency: cur, Balance: byCur[cur]})
		lim, err := limitFor(ctx, db, m.ID, m.KYBTier, cur)
		if err != nil {
			return nil, err
		}
		var issued int64
		err = db.NewRaw(`select issued from card_issue_daily where merchant_id = ? and currency = ? and day = ?::date`,
			merchant, cur, day).Scan(ctx, &issued)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, ledger.MapError(err)
		}
		lim.DailyCardIssued = issued
		p.Limits = append(p.Limits, *lim)
	}
	if p.Receivables, err = s.receivables(ctx, merchant, m.Currencies); err != nil {
		return nil, err
	}
	return p, nil
}

// receivables returns what the merchant's cards owe, one entry per currency
// of currencies (zero included), then any other currency in which a card
// owes something. Each card_receivable account is reached through
// accounts_card_receivable_idx (0008): only cards that once owed have one.
func (s *Service) receivables(ctx context.Context, merchant int64, currencies []string) ([]Receivable, error) {
	var rows []struct {
		Currency string `bun:"currency"`
		Owed     int64  `bun:"owed"`
	}
	err := s.l.DB().NewRaw(`
		select a.currency, least(-sum(b.balance), 1000000000000000000)::bigint as owed
		from accounts a
		cross join lateral (select b.balance from balances b where b.account_id = a.id offset 0) b
		where a.merchant_id = ? and a.type = 'card_receivable'
		group by a.currency
		order by a.currency`, merchant).Scan(ctx, &rows)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	owed := make(map[string]int64, len(rows))
	for _, r := range rows {
		owed[r.Currency] = r.Owed
	}
	out := make([]Receivable, 0, len(currencies))
	for _, cur := range currencies {
		out = append(out, Receivable{Currency: cur, Amount: owed[cur]})
		delete(owed, cur)
	}
	for _, r := range rows {
		if _, other := owed[r.Currency]; other && r.Owed != 0 {
			out = append(out, Receivable{Currency: r.Currency, Amount: r.Owed})
		}
	}
	return out, nil
}
