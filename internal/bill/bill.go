// Package bill is the merchant's bill (docs/api.md, "Bill"): the lines of
// bill_lines of a time range, a page at a time or streamed, with the
// filters by kind, currency and card that bill_blocks keeps cheap. The
// journal core writes the lines (ledger/post.go, flush.go) under the
// merchant's head lock; this package only reads them, on the standby when
// reads are routed (issue 28, point 1: the core is the journal only).
package bill

import (
	"context"
	"database/sql"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Service reads the bill of a ledger.
type Service struct{ l *ledger.Ledger }

// New returns the bill of l.
func New(l *ledger.Ledger) *Service { return &Service{l: l} }

// The bill export (docs/api.md, "Bill"): the lines of bill_lines whose
// created_at falls in a time range, in bill_seq order, a page at a time or
// streamed.
//
// Why the lines of a time range are one contiguous bill_seq range. post()
// (state.go) gives every bill line the merchant's next bill_seq while it
// holds the merchant's head lock, and stamps it with the entry's created_at,
// which is never before the head's last_ts: created_at is non-decreasing in
// bill_seq for each merchant. So the lines with from ≤ created_at < to are
// exactly the bill_seq range [lo, hi], where lo is the first line at or
// after from and hi the last one before to. Both are one seek of
// bill_lines_created_idx (merchant_id, created_at, bill_seq); the total is
// hi − lo + 1, and page N is the primary-key range
// lo+(N−1)·size … min(hi, lo+N·size−1): page 10,000 costs what page 1 costs,
// with no OFFSET scan.
//
// Why a page once read never changes. bill_seq is gapless and assigned under
// the head lock, which is held until COMMIT, so whoever sees line n sees
// every line before it: the lines up to hi are all there when hi is read,
// and they are append-only. A line written later gets a bill_seq above every
// existing one and a created_at at or after every existing one, so it can
// only land after hi: either outside the range (created_at ≥ to) or, when
// the range reaches the present, extending hi. lo never moves (no new line
// can fall before it), so a full page keeps its lines, and a partial last
// page can only grow at its end.

// PageMax bounds the lines of one Bill page and of one BillStream batch.
const PageMax = 1000

// Line is one movement of a billable account (a funding account or a
// card's available balance).
type Line struct {
	BillSeq     int64         // the merchant's gapless bill sequence
	MerchantSeq int64         // the journal entry's merchant sequence
	Kind        postings.Kind // the entry's kind
	// Amount is signed minor units: negative when money left the account.
	Amount   int64
	Currency string
	// CreatedAt is the entry's time (UTC).
	CreatedAt time.Time
	// Account is "funding" for a funding account, else the card token of
	// the card whose available balance moved.
	Account string
	// The entry's references; empty when absent.
	CardNo, TxID, AuthID string
	// BalanceAfter is the account's balance after this movement.
	BalanceAfter int64
	// AccountType is the type of the account that moved: funding, a
	// card's available balance, its held funds or its receivable.
	AccountType postings.AccountType
	// RelatedTo is, on a FEE line, the merchant sequence of the movement
	// the fee belongs to (the authorization, capture or remittance debit);
	// 0 when the fee is a movement of its own (position.go).
	RelatedTo int64
}

// AccountFunding is Line.Account for a funding account.
const AccountFunding = "funding"

// Range is the bill_seq range [First, Last] of the lines of a time
// range; Total is its length, 0 (with First and Last 0) when it is empty.
type Range struct {
	First, Last int64
	Total       int64
}

// Page is one page of a bill.
type Page struct {
	Range
	Page, Size int
	Lines      []Line
}

// Bill returns page page (from 1) of size lines (1 to PageMax) of the
// merchant's bill lines with from ≤ created_at < to, in bill_seq order,
// with the total of the range. A page past the end is empty.
func (s *Service) Bill(ctx context.Context, merchant int64, from, to time.Time, page, size int) (*Page, error) {
	if page < 1 {
		return nil, postings.FieldErrorf("page", "must be at least 1")
	}
	if size < 1 || size > PageMax {
		return nil, postings.FieldErrorf("size", "must be from 1 to %d", PageMax)
	}
	// One connection for both reads: one routing decision (readroute.go).
	conn, err := s.l.ReadConn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	r, err := billRangeOn(ctx, conn, merchant, from, to)
	if err != nil {
		return nil, err
	}
	p := &Page{Range: r, Page: page, Size: size, Lines: []Line{}}
	first, last, ok := pageBounds(r, page, size)
	if !ok {
		return p, nil
	}
	p.Lines, err = billLinesOn(ctx, conn, merchant, first, last)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// pageBounds is the bill_seq range of page page of r, if it has lines.
// (page−1) is compared against the range length divided by size, so that
// nothing overflows whatever page is.
func pageBounds(r Range, page, size int) (first, last int64, ok bool) {
	if r.Total == 0 || int64(page-1) > (r.Total-1)/int64(size) {
		return 0, 0, false
	}
	first = r.First + int64(page-1)*int64(size)
	last = min(r.Last, first+int64(size)-1)
	return first, last, true
}

// BillRange finds the bill_seq range of the merchant's lines with
// from ≤ created_at < to: two seeks of bill_lines_created_idx, in one
// statement.
func (s *Service) BillRange(ctx context.Context, merchant int64, from, to time.Time) (Range, error) {
	if !to.After(from) {
		return Range{}, nil
	}
	conn, err := s.l.ReadConn(ctx)
	if err != nil {
		return Range{}, err
	}
	defer conn.Close()
	return billRangeOn(ctx, conn, merchant, from, to)
}

func billRangeOn(ctx context.Context, conn bun.Conn, merchant int64, from, to time.Time) (Range, error) {
	if !to.After(from) {
		return Range{}, nil
	}
	var row struct {
		Lo sql.NullInt64 `bun:"lo"`
		Hi sql.NullInt64 `bun:"hi"`
	}
	err := conn.NewRaw(billRangeSQL, merchant, from.UTC(), merchant, to.UTC()).Scan(ctx, &row)
	if err != nil {
		return Range{}, ledger.MapError(err)
	}
	if !row.Lo.Valid || !row.Hi.Valid || row.Hi.Int64 < row.Lo.Int64 {
		return Range{}, nil
	}
	return Range{First: row.Lo.Int64, Last: row.Hi.Int64, Total: row.Hi.Int64 - row.Lo.Int64 + 1}, nil
}

// billRangeSQL is BillRange's statement: two seeks of bill_lines_created_idx.
const billRangeSQL = `
	select
	  (select bill_seq from bill_lines
	   where merchant_id = ? and created_at >= ?
	   order by created_at, bill_seq limit 1) as lo,
	  (select bill_seq from bill_lines
	   where merchant_id = ? and created_at < ?
	   order by created_at desc, bill_seq desc limit 1) as hi`

// BillStream calls fn with the lines of r in bill_seq order, in batches of
// at most batch lines (1 to PageMax; others mean PageMax), each read
// by its own primary-key range query: memory stays bounded whatever the
// range. It stops at the first error, fn's included.
func (s *Service) BillStream(ctx context.Context, merchant int64, r Range, batch int, fn func([]Line) error) error {
	if batch < 1 || batch > PageMax {
		batch = PageMax
	}
	if r.Total == 0 {
		return nil
	}
	for first := r.First; first <= r.Last; first += int64(batch) {
		last := min(r.Last, first+int64(batch)-1)
		lines, err := s.billLines(ctx, merchant, first, last)
		if err != nil {
			return err
		}
		if err := fn(lines); err != nil {
			return err
		}
	}
	return nil
}

type billReadRow struct {
	BillSeq      int64          `bun:"bill_seq"`
	MerchantSeq  int64          `bun:"merchant_seq"`
	Kind         string         `bun:"kind"`
	Amount       int64          `bun:"amount"`
	Currency     string         `bun:"currency"`
	BalanceAfter int64          `bun:"balance_after"`
	CreatedAt    time.Time      `bun:"created_at"`
	CardNo       sql.NullString `bun:"card_no"`
	TxID         sql.NullString `bun:"tx_id"`
	AuthID       sql.NullString `bun:"auth_id"`
	AccountType  string         `bun:"account_type"`
	AccountCard  sql.NullString `bun:"account_card"`
	RelatedTo    sql.NullInt64  `bun:"related_to"`
}

// billLines reads the lines first..last (a primary-key range) with their
// accounts.
//
// Each line's account is a lateral probe of accounts_pkey that `offset 0`
// keeps from being flattened into a join. Why: the planner estimates the
// range from bill_seq's statistics over every merchant, and low sequence
// numbers are common to all of them — page 1 of a merchant with a million
// lines was estimated at ~4,000 rows and joined by hashing a sequential scan
// of all accounts (40 ms of PostgreSQL CPU instead of 0.4 ms, make bench
// scenario 5a). A page is at most PageMax lines, so a probe per line is
// always the right plan.
const billLinesSQL = `
	select b.bill_seq, b.merchant_seq, b.kind, b.amount, b.currency, b.balance_after, b.created_at,
	       b.card_no, b.tx_id, b.auth_id, a.type as account_type, a.card_no as account_card, r.related_to
	from bill_lines b
	cross join lateral (select type, card_no from accounts where id = b.account_id offset 0) a
	` + relatedToJoin + `
	where b.merchant_id = ? and b.bill_seq between ? and ?
	order by b.bill_seq`

func (s *Service) billLines(ctx context.Context, merchant, first, last int64) ([]Line, error) {
	conn, err := s.l.ReadConn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return billLinesOn(ctx, conn, merchant, first, last)
}

func billLinesOn(ctx context.Context, conn bun.Conn, merchant, first, last int64) ([]Line, error) {
	var rows []billReadRow
	err := conn.NewRaw(billLinesSQL, merchant, first, last).Scan(ctx, &rows)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	return billLinesOf(rows), nil
}

// billLinesOf turns read rows into lines.
func billLinesOf(rows []billReadRow) []Line {
	out := make([]Line, len(rows))
	for i, r := range rows {
		acct := AccountFunding
		if r.AccountType != string(postings.AccountFunding) {
			acct = r.AccountCard.String
		}
		out[i] = Line{
			BillSeq: r.BillSeq, MerchantSeq: r.MerchantSeq, Kind: postings.Kind(r.Kind),
			Amount: r.Amount, Currency: r.Currency, CreatedAt: r.CreatedAt.UTC(), Account: acct,
			CardNo: r.CardNo.String, TxID: r.TxID.String, AuthID: r.AuthID.String,
			BalanceAfter: r.BalanceAfter, AccountType: postings.AccountType(r.AccountType), RelatedTo: r.RelatedTo.Int64,
		}
	}
	return out
}
