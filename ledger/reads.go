package ledger

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/postings"
)

// EntriesPageMax bounds the entries returned by one read.
const EntriesPageMax = 1000

// Entries returns merchant's entries with sequence numbers in [from, to],
// at most limit of them (capped at EntriesPageMax), in sequence order.
func (l *Ledger) Entries(ctx context.Context, merchant, from, to int64, limit int) ([]postings.Record, error) {
	return l.readEntries(ctx, l.db, merchant, from, to, limit)
}

type entryReadRow struct {
	MerchantSeq int64             `bun:"merchant_seq"`
	ID          int64             `bun:"id"`
	Kind        string            `bun:"kind"`
	CreatedAt   time.Time         `bun:"created_at"`
	CardNo      sql.NullString    `bun:"card_no"`
	TxID        sql.NullString    `bun:"tx_id"`
	AuthID      sql.NullString    `bun:"auth_id"`
	Metadata    map[string]string `bun:"metadata,type:jsonb"`
	PrevHash    []byte            `bun:"prev_hash"`
	Hash        []byte            `bun:"hash"`
}

type postingReadRow struct {
	MerchantSeq int64          `bun:"merchant_seq"`
	Idx         int            `bun:"idx"`
	Amount      int64          `bun:"amount"`
	Currency    string         `bun:"currency"`
	SrcMerchant int64          `bun:"src_merchant"`
	SrcType     string         `bun:"src_type"`
	SrcCurrency string         `bun:"src_currency"`
	SrcCard     sql.NullString `bun:"src_card"`
	DstMerchant int64          `bun:"dst_merchant"`
	DstType     string         `bun:"dst_type"`
	DstCurrency string         `bun:"dst_currency"`
	DstCard     sql.NullString `bun:"dst_card"`
}

func (r *postingReadRow) toPosting() postings.Posting {
	return postings.Posting{
		Source:      postings.Account{Merchant: r.SrcMerchant, Type: postings.AccountType(r.SrcType), Currency: r.SrcCurrency, Card: r.SrcCard.String},
		Destination: postings.Account{Merchant: r.DstMerchant, Type: postings.AccountType(r.DstType), Currency: r.DstCurrency, Card: r.DstCard.String},
		Amount:      r.Amount,
		Currency:    r.Currency,
	}
}

// postingsSelect reads postings with their accounts' identities. The
// accounts are lateral primary-key probes (`offset 0` keeps them from being
// flattened into joins) because the planner estimates a merchant_seq range
// from statistics over every merchant and can overestimate it a
// hundredfold, which once made billLines hash a scan of all accounts
// (see there); a read is at most EntriesPageMax entries.
const postingsSelect = `
	select p.merchant_seq, p.idx, p.amount, p.currency,
	       s.merchant_id as src_merchant, s.type as src_type, s.currency as src_currency, s.card_no as src_card,
	       d.merchant_id as dst_merchant, d.type as dst_type, d.currency as dst_currency, d.card_no as dst_card
	from postings p
	cross join lateral (select merchant_id, type, currency, card_no from accounts where id = p.source_id offset 0) s
	cross join lateral (select merchant_id, type, currency, card_no from accounts where id = p.destination_id offset 0) d`

func (l *Ledger) readEntries(ctx context.Context, db bun.IDB, merchant, from, to int64, limit int) ([]postings.Record, error) {
	if limit <= 0 || limit > EntriesPageMax {
		limit = EntriesPageMax
	}
	var es []entryReadRow
	err := db.NewRaw(`
		select merchant_seq, id, kind, created_at, card_no, tx_id, auth_id, metadata, prev_hash, hash
		from entries
		where merchant_id = ? and merchant_seq between ? and ?
		order by merchant_seq
		limit ?`, merchant, from, to, limit).Scan(ctx, &es)
	if err != nil {
		return nil, mapError(err)
	}
	if len(es) == 0 {
		return nil, nil
	}
	var ps []postingReadRow
	err = db.NewRaw(postingsSelect+`
		where p.merchant_id = ? and p.merchant_seq between ? and ?
		order by p.merchant_seq, p.idx`, merchant, es[0].MerchantSeq, es[len(es)-1].MerchantSeq).Scan(ctx, &ps)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]postings.Record, len(es))
	bySeq := make(map[int64]*postings.Record, len(es))
	for i, e := range es {
		r := &out[i]
		r.Merchant, r.Seq, r.ID = merchant, e.MerchantSeq, e.ID
		r.Kind = postings.Kind(e.Kind)
		r.CreatedAt = e.CreatedAt.UTC()
		r.Refs = postings.Refs{CardNo: e.CardNo.String, TxID: e.TxID.String, AuthID: e.AuthID.String}
		if len(e.Metadata) > 0 {
			r.Metadata = e.Metadata
		}
		copy(r.PrevHash[:], e.PrevHash)
		copy(r.Hash[:], e.Hash)
		bySeq[r.Seq] = r
	}
	for i := range ps {
		if r := bySeq[ps[i].MerchantSeq]; r != nil {
			r.Postings = append(r.Postings, ps[i].toPosting())
		}
	}
	return out, nil
}

// Balance returns the balance of one account in minor units; an account that
// never moved has balance 0.
func (l *Ledger) Balance(ctx context.Context, a postings.Account) (int64, error) {
	var bal int64
	err := l.db.NewRaw(`
		select b.balance from accounts a join balances b on b.account_id = a.id
		where a.address = ?`, a.Address()).Scan(ctx, &bal)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return bal, mapError(err)
}
