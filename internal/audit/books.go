package audit

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// The books' reads beyond a verify and a statement: the entries carrying a
// reference, and a merchant's balances by account type. They read the
// journal's tables and decide nothing, so they are a reader's, not the
// journal core's (issue 28, point 1).

// EntriesByRef returns the entries carrying a reference (at least one field
// of ref set; all set fields must match), oldest first, at most
// ledger.EntriesPageMax.
func (s *Service) EntriesByRef(ctx context.Context, merchant int64, ref postings.Refs) ([]postings.Record, error) {
	if ref == (postings.Refs{}) {
		return nil, postings.Errorf(postings.EINVALID, "give at least one reference")
	}
	q := s.l.DB().NewSelect().TableExpr("entries AS e").Column("e.merchant_seq").
		Where("e.merchant_id = ?", merchant).OrderExpr("e.merchant_seq").Limit(ledger.EntriesPageMax)
	if ref.CardNo != "" {
		q = q.Where("e.card_no = ?", ref.CardNo)
	}
	if ref.TxID != "" {
		q = q.Where("e.tx_id = ?", ref.TxID)
	}
	if ref.AuthID != "" {
		q = q.Where("e.auth_id = ?", ref.AuthID)
	}
	var seqs []int64
	if err := q.Scan(ctx, &seqs); err != nil {
		return nil, ledger.MapError(err)
	}
	out := make([]postings.Record, 0, len(seqs))
	for _, seq := range seqs {
		recs, err := s.l.Entries(ctx, merchant, seq, seq, 1)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

// AccountBalance is one account with its balance.
type AccountBalance struct {
	Account postings.Account
	Balance int64
}

// AccountBalancesMax bounds the accounts returned by Balances.
const AccountBalancesMax = 10_000

// Balances returns the balances of a merchant's accounts of the given types
// (all types when none is given), ordered by address.
func (s *Service) Balances(ctx context.Context, merchant int64, types ...postings.AccountType) ([]AccountBalance, error) {
	q := s.l.DB().NewSelect().
		TableExpr("accounts AS a").
		Join("JOIN balances AS b ON b.account_id = a.id").
		ColumnExpr("a.merchant_id, a.type, a.currency, coalesce(a.card_no, '') AS card_no, b.balance").
		Where("a.merchant_id = ?", merchant).
		OrderExpr("a.address").
		Limit(AccountBalancesMax)
	if len(types) > 0 {
		ts := make([]string, len(types))
		for i, t := range types {
			ts[i] = string(t)
		}
		q = q.Where("a.type IN (?)", bun.In(ts))
	}
	var rows []struct {
		MerchantID int64  `bun:"merchant_id"`
		Type       string `bun:"type"`
		Currency   string `bun:"currency"`
		CardNo     string `bun:"card_no"`
		Balance    int64  `bun:"balance"`
	}
	if err := q.Scan(ctx, &rows); err != nil {
		return nil, ledger.MapError(err)
	}
	out := make([]AccountBalance, len(rows))
	for i, r := range rows {
		out[i] = AccountBalance{
			Account: postings.Account{Merchant: r.MerchantID, Type: postings.AccountType(r.Type), Currency: r.Currency, Card: r.CardNo},
			Balance: r.Balance,
		}
	}
	return out, nil
}
