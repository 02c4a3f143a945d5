package network

import (
	"context"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
)

// The reads behind refund reconciliation (package reconcile, "gateway
// reconcile refunds"): the CARD_REFUND entries a network's refund file is
// matched against, by the network's message id (network_refunds, written
// by Refund) and by period. They only read.

// RefundEntry is a refund from the network as the journal has it.
type RefundEntry struct {
	MessageID string // "" for a refund booked before refunds kept their message id
	// Found: a CARD_REFUND entry carries the message id; the fields below
	// are set only then.
	Found bool
	// Test: the refund is a test merchant's (its sandbox's, never the
	// network's).
	Test      bool
	EntryID   int64 // entries.id: the cursor of RefundsBetween, what a reconciliation records
	Merchant  int64
	ShopNo    string
	Seq       int64
	CardNo    string
	Amount    int64 // what the entry credited, minor units of Currency (the card's)
	Currency  string
	CreatedAt time.Time
}

// refundColumns are the columns refundRead scans, from entries e.
const refundColumns = `true as found, e.id as entry_id, e.merchant_id, e.merchant_seq,
	coalesce(e.card_no, '') as card_no, e.created_at,
	coalesce((select sum(p.amount) from postings p
	          where p.merchant_id = e.merchant_id and p.merchant_seq = e.merchant_seq), 0)::bigint as amount,
	coalesce((select min(p.currency) from postings p
	          where p.merchant_id = e.merchant_id and p.merchant_seq = e.merchant_seq), '') as currency`

// refundsByMessageSQL: each message id probes network_refunds' primary
// key, then its entry's, a CARD_REFUND (Refund writes both; offset 0 keeps
// each a probe whatever the statistics).
const refundsByMessageSQL = `
	select u.message_id, x.*
	from unnest(?::text[]) with ordinality as u(message_id, n)
	left join lateral (
		select ` + refundColumns + `
		from (select merchant_id, merchant_seq from network_refunds where message_id = u.message_id offset 0) r
		cross join lateral (select * from entries where merchant_id = r.merchant_id and merchant_seq = r.merchant_seq offset 0) e
	) x on true
	order by u.n`

// refundIndexFrom is the date in entries_card_refund_day_idx's predicate
// (sql/, "network refunds"): a period read that starts before it could not
// use the index, and no entry is that old.
var refundIndexFrom = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// refundsBetweenSQL: a range of entries_card_refund_day_idx, then the
// message id of each (network_refunds_entry_key), none for a refund from
// before message ids were kept.
const refundsBetweenSQL = `
	select coalesce(r.message_id, '') as message_id, ` + refundColumns + `
	from entries e
	left join lateral (select message_id from network_refunds x
	                   where x.merchant_id = e.merchant_id and x.merchant_seq = e.merchant_seq offset 0) r on true
	where e.kind = 'CARD_REFUND' and e.created_at >= ? and e.created_at < ?
	  and (e.created_at, e.id) > (?, ?)
	order by e.created_at, e.id
	limit ?`

// refundRead is a row of either read; Found is false (and the rest zero)
// for a message id no refund carries.
type refundRead struct {
	MessageID   string     `bun:"message_id"`
	Found       *bool      `bun:"found"`
	EntryID     *int64     `bun:"entry_id"`
	MerchantID  *int64     `bun:"merchant_id"`
	MerchantSeq *int64     `bun:"merchant_seq"`
	CardNo      *string    `bun:"card_no"`
	CreatedAt   *time.Time `bun:"created_at"`
	Amount      *int64     `bun:"amount"`
	Currency    *string    `bun:"currency"`
}

func (r *refundRead) entry() RefundEntry {
	e := RefundEntry{MessageID: r.MessageID}
	if r.Found == nil || !*r.Found {
		return e
	}
	e.Found, e.EntryID, e.Merchant, e.Seq = true, *r.EntryID, *r.MerchantID, *r.MerchantSeq
	e.CardNo, e.CreatedAt, e.Amount, e.Currency = *r.CardNo, r.CreatedAt.UTC(), *r.Amount, *r.Currency
	return e
}

// RefundsByMessage returns one RefundEntry for each of messageIDs (at most
// SettlementBatchMax), in their order: the refund that carries it (Found),
// a test merchant's flagged (Test, with its shop number).
func (s *Service) RefundsByMessage(ctx context.Context, messageIDs []string) ([]RefundEntry, error) {
	if len(messageIDs) == 0 || len(messageIDs) > SettlementBatchMax {
		return nil, batchBound(len(messageIDs), "message ids")
	}
	var rows []refundRead
	if err := s.l.DB().NewRaw(refundsByMessageSQL, pgdialect.Array(messageIDs)).Scan(ctx, &rows); err != nil {
		return nil, ledger.MapError(err)
	}
	return s.refundEntries(ctx, rows)
}

// RefundsBetween returns the CARD_REFUND entries created in [from, to) of
// every merchant but the test ones, in (created_at, id) order after the
// cursor: at most limit (capped at SettlementBatchMax). The last one's
// CreatedAt and EntryID are the next cursor.
func (s *Service) RefundsBetween(ctx context.Context, from, to time.Time, after SettlementCursor, limit int) ([]RefundEntry, error) {
	if from.Before(refundIndexFrom) {
		from = refundIndexFrom // nothing is older, and the index starts here
	}
	return pageLive(limit, after, func(after SettlementCursor, want int) ([]RefundEntry, error) {
		var rows []refundRead
		err := s.l.DB().NewRaw(refundsBetweenSQL, from.UTC(), to.UTC(), after.CreatedAt.UTC(), after.EntryID, want).Scan(ctx, &rows)
		if err != nil {
			return nil, ledger.MapError(err)
		}
		return s.refundEntries(ctx, rows)
	}, func(e *RefundEntry) (RefundEntry, bool) { return *e, !e.Test },
		func(e *RefundEntry) SettlementCursor {
			return SettlementCursor{CreatedAt: e.CreatedAt, EntryID: e.EntryID}
		})
}

// refundEntries converts the rows and sets their shop numbers and test
// flags from internal/merchant: one batch read for the page.
func (s *Service) refundEntries(ctx context.Context, rows []refundRead) ([]RefundEntry, error) {
	out := make([]RefundEntry, len(rows))
	var ids []int64
	for i := range rows {
		if out[i] = rows[i].entry(); out[i].Found {
			ids = append(ids, out[i].Merchant)
		}
	}
	ms, err := merchant.Briefs(ctx, s.l.DB(), ids)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if m, ok := ms[out[i].Merchant]; ok && out[i].Found {
			out[i].ShopNo, out[i].Test = m.ShopNo, m.Test
		}
	}
	return out, nil
}
