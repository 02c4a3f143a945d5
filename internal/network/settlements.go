package network

import (
	"context"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// The reads behind settlement-file reconciliation (package reconcile): the
// CARD_SETTLE entries that a card network's settlement file is matched
// against, with their authorization's status. They only read.

// Settlement is a card network clearing as the journal has it: the
// CARD_SETTLE entry of an authorization. The network's own amount and
// message id are the entry's metadata (txn_amount, txn_currency,
// message_id), written by Clear.
type Settlement struct {
	AuthID     string
	AuthStatus string // the authorization's status; "" when there is no such authorization
	// Test: the authorization is a test merchant's (its sandbox's, never
	// the network's); ShopNo is then set, Found or not.
	Test        bool
	Found       bool  // a CARD_SETTLE entry exists; the fields below are set only then
	EntryID     int64 // entries.id: the cursor of SettlementsBetween
	Merchant    int64
	ShopNo      string
	Seq         int64
	CardNo      string
	CreatedAt   time.Time
	MessageID   string // metadata message_id
	TxnAmount   string // metadata txn_amount: minor units of TxnCurrency, as text
	TxnCurrency string
	Captured    int64 // what the entry captured, in Currency (the card's)
	Currency    string
}

// SettlementBatchMax bounds one read of settlements.
const SettlementBatchMax = 1000

// settlementColumns are the columns settlementRow scans, from entries se.
// The merchants' shop numbers and test flags are internal/merchant's
// (withMerchants).
const settlementColumns = `true as found, se.id as entry_id, se.merchant_id, se.merchant_seq,
	coalesce(se.card_no, '') as card_no, se.created_at,
	coalesce(se.metadata->>'message_id', '') as message_id,
	coalesce(se.metadata->>'txn_amount', '') as txn_amount,
	coalesce(se.metadata->>'txn_currency', '') as txn_currency,
	coalesce((select sum(p.amount) from postings p
	          where p.merchant_id = se.merchant_id and p.merchant_seq = se.merchant_seq), 0)::bigint as captured,
	coalesce((select min(p.currency) from postings p
	          where p.merchant_id = se.merchant_id and p.merchant_seq = se.merchant_seq), '') as currency`

// The authorization of a settlement entry, a probe of its primary key
// (offset 0 keeps the planner from turning it into a join it would choose
// from the statistics). A test merchant's clearings are left out after the
// read (SettlementsBetween): they come from its sandbox (docs/api.md, "The
// sandbox"), never from the card network, whose settlement file cannot
// list them; its authorizations look unknown to reconciliation.
const settlementProbes = `
	left join lateral (select status from authorizations where auth_id = se.auth_id offset 0) h on true`

// settlementsByAuthSQL: each authorization id probes entries_auth_id_idx
// (the kind is filtered outside the probe, or the planner may prefer
// reading the whole partial index of settlements, small in a young
// database). A test merchant's authorization is found and flagged (test,
// with its shop number): a file that names one is told so, not that the
// authorization does not exist (issue 29).
const settlementsByAuthSQL = `
	select r.auth_id, coalesce(h.status, '') as auth_status, coalesce(h.merchant_id, 0) as auth_merchant, s.*
	from unnest(?::text[]) with ordinality as r(auth_id, n)
	left join lateral (select a.status, a.merchant_id from authorizations a where a.auth_id = r.auth_id offset 0) h on true
	left join lateral (
		select ` + settlementColumns + `
		from (select * from entries where auth_id = r.auth_id offset 0) se
		where se.kind = 'CARD_SETTLE'
		order by se.id limit 1
	) s on true
	order by r.n`

// settlementsBetweenSQL: a range of entries_card_settle_idx, then probes.
const settlementsBetweenSQL = `
	select se.auth_id, coalesce(h.status, '') as auth_status, ` + settlementColumns + `
	from entries se` + settlementProbes + `
	where se.kind = 'CARD_SETTLE' and se.created_at >= ? and se.created_at < ?
	  and (se.created_at, se.id) > (?, ?)
	order by se.created_at, se.id
	limit ?`

type settlementRow struct {
	AuthID       string    `bun:"auth_id"`
	AuthStatus   string    `bun:"auth_status"`
	AuthMerchant int64     `bun:"auth_merchant"`
	Test         bool      `bun:"-"` // the authorization's merchant is a test one (withMerchants)
	AuthShopNo   string    `bun:"-"`
	Found        bool      `bun:"found"`
	EntryID      int64     `bun:"entry_id"`
	MerchantID   int64     `bun:"merchant_id"`
	ShopNo       string    `bun:"-"`
	EntryTest    bool      `bun:"-"` // the entry's merchant is a test one
	MerchantSeq  int64     `bun:"merchant_seq"`
	CardNo       string    `bun:"card_no"`
	CreatedAt    time.Time `bun:"created_at"`
	MessageID    string    `bun:"message_id"`
	TxnAmount    string    `bun:"txn_amount"`
	TxnCurrency  string    `bun:"txn_currency"`
	Captured     int64     `bun:"captured"`
	Currency     string    `bun:"currency"`
}

func (r *settlementRow) toSettlement() Settlement {
	s := Settlement{AuthID: r.AuthID, AuthStatus: r.AuthStatus, Found: r.Found, Test: r.Test}
	if r.Test {
		s.ShopNo = r.AuthShopNo
	}
	if r.Found {
		s.EntryID, s.Merchant, s.ShopNo, s.Seq, s.CardNo = r.EntryID, r.MerchantID, r.ShopNo, r.MerchantSeq, r.CardNo
		s.CreatedAt = r.CreatedAt.UTC()
		s.MessageID, s.TxnAmount, s.TxnCurrency = r.MessageID, r.TxnAmount, r.TxnCurrency
		s.Captured, s.Currency = r.Captured, r.Currency
	}
	return s
}

// SettlementsByAuth returns one Settlement for each of authIDs (at most
// SettlementBatchMax), in their order: the authorization's CARD_SETTLE
// entry when there is one (Found), and the authorization's status either
// way. Clear writes one CARD_SETTLE per authorization; should there be
// several, the first is returned.
func (s *Service) SettlementsByAuth(ctx context.Context, authIDs []string) ([]Settlement, error) {
	if len(authIDs) == 0 || len(authIDs) > SettlementBatchMax {
		return nil, batchBound(len(authIDs), "authorizations")
	}
	var rows []settlementRow
	err := s.l.DB().NewRaw(settlementsByAuthSQL, pgdialect.Array(authIDs)).Scan(ctx, &rows)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	if err := s.withMerchants(ctx, rows); err != nil {
		return nil, err
	}
	out := make([]Settlement, len(rows))
	for i := range rows {
		out[i] = rows[i].toSettlement()
	}
	return out, nil
}

// batchBound is the answer to a read of n ids that is empty (nothing) or
// above SettlementBatchMax (refused).
func batchBound(n int, what string) error {
	if n > SettlementBatchMax {
		return postings.Errorf(postings.ELIMIT, "at most %d %s per read", SettlementBatchMax, what)
	}
	return nil
}

// SettlementCursor is where a page of SettlementsBetween ends; the zero
// value starts at the beginning.
type SettlementCursor struct {
	CreatedAt time.Time
	EntryID   int64
}

// SettlementsBetween returns the CARD_SETTLE entries created in [from, to),
// of every merchant, in (created_at, id) order, after cursor: at most limit
// of them (capped at SettlementBatchMax). The last one's CreatedAt and
// EntryID are the next cursor. The index entries_card_settle_idx makes each
// page a range scan.
func (s *Service) SettlementsBetween(ctx context.Context, from, to time.Time, after SettlementCursor, limit int) ([]Settlement, error) {
	return pageLive(limit, after, func(after SettlementCursor, want int) ([]settlementRow, error) {
		var rows []settlementRow
		err := s.l.DB().NewRaw(settlementsBetweenSQL, from.UTC(), to.UTC(), after.CreatedAt.UTC(), after.EntryID, want).
			Scan(ctx, &rows)
		if err != nil {
			return nil, ledger.MapError(err)
		}
		return rows, s.withMerchants(ctx, rows)
	}, func(r *settlementRow) (Settlement, bool) { return r.toSettlement(), !r.EntryTest },
		func(r *settlementRow) SettlementCursor {
			return SettlementCursor{CreatedAt: r.CreatedAt, EntryID: r.EntryID}
		})
}

// pageLive reads a page of at most limit (capped at SettlementBatchMax)
// after the cursor with read, keeping what live keeps: a test merchant's
// clearings and refunds are skipped, and a full page they thinned is read
// on after its last row (cursor), so that a short page still means the
// end (one more round trip only where the sandbox's rows are).
func pageLive[R, T any](limit int, after SettlementCursor, read func(after SettlementCursor, want int) ([]R, error),
	live func(*R) (T, bool), cursor func(*R) SettlementCursor) ([]T, error) {
	if limit <= 0 || limit > SettlementBatchMax {
		limit = SettlementBatchMax
	}
	out := make([]T, 0, limit)
	for {
		want := limit - len(out)
		rows, err := read(after, want)
		if err != nil {
			return nil, err
		}
		for i := range rows {
			if t, ok := live(&rows[i]); ok {
				out = append(out, t)
			}
		}
		if len(rows) < want || len(out) == limit {
			return out, nil
		}
		after = cursor(&rows[len(rows)-1])
	}
}

// withMerchants sets the rows' shop numbers and test flags, the
// authorization's merchant's and the entry's, from internal/merchant: one
// batch read for the page.
func (s *Service) withMerchants(ctx context.Context, rows []settlementRow) error {
	ids := make([]int64, 0, 2*len(rows))
	for _, r := range rows {
		if r.AuthMerchant != 0 {
			ids = append(ids, r.AuthMerchant)
		}
		if r.Found {
			ids = append(ids, r.MerchantID)
		}
	}
	ms, err := merchant.Briefs(ctx, s.l.DB(), ids)
	if err != nil {
		return err
	}
	for i := range rows {
		r := &rows[i]
		if m, ok := ms[r.AuthMerchant]; ok {
			r.Test, r.AuthShopNo = m.Test, m.ShopNo
		}
		if m, ok := ms[r.MerchantID]; ok && r.Found {
			r.ShopNo, r.EntryTest = m.ShopNo, m.Test
		}
	}
	return nil
}
