package cards

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// The card list (GET /shop/card/list, docs/api.md "Card list"): a
// merchant's cards in the order they were issued, a page at a time, with
// optional filters.
//
// Why a page once read keeps its cards when new ones are issued: the list
// is in list_seq order, and every card insert runs in the ledger writer with
// the merchant's head locked until COMMIT, so a card committed later has a
// higher list_seq than every card a reader could already see
// (sql/0010_cardsbill.sql): it lands after the last page. A status change
// (freeze, cancel) can move a card into or out of a status filter; nothing
// else moves.
//
// Cost: the total and the page are read from cards_list_idx alone (it
// carries status, currency and created_at), in list_seq order, with no
// sort: page N skips (N−1)·size index entries of the merchant's cards,
// never a table row, and only the page's own cards are read whole.

// ListPageMax bounds a page of the card list.
const ListPageMax = 500

// CardFilter narrows the card list; a zero field does not filter.
// CreatedFrom and CreatedTo bound created_at: from ≤ created_at < to.
type CardFilter struct {
	Status      string
	Currency    string
	CreatedFrom time.Time
	CreatedTo   time.Time
}

// CardPage is one page of the card list.
type CardPage struct {
	Total int64
	Cards []*Card
}

// stmtCountCards and stmtListCards take the filter as optional parameters
// (null: no filter), so that each is one prepared statement.
const cardListWhere = `
	where c.merchant_id = $1
	  and ($2::text is null or c.status = $2)
	  and ($3::text is null or c.currency = $3)
	  and ($4::timestamptz is null or c.created_at >= $4)
	  and ($5::timestamptz is null or c.created_at < $5)`

var stmtCountCards = ledger.NewStmt(`select count(*) from cards c` + cardListWhere)

var stmtListCards = ledger.NewStmt(`
	select c.card_no from cards c` + cardListWhere + `
	order by c.list_seq offset $6 limit $7`)

// ListCards returns page page (from 1) of size cards (1 to ListPageMax) of
// the merchant's cards that pass f, in the order they were issued, with the
// total. A page past the end is empty.
func (s *Service) ListCards(ctx context.Context, merchant int64, f CardFilter, page, size int) (*CardPage, error) {
	if page < 1 {
		return nil, postings.FieldErrorf("page", "must be at least 1")
	}
	if size < 1 || size > ListPageMax {
		return nil, postings.FieldErrorf("size", "must be from 1 to %d", ListPageMax)
	}
	args := []any{merchant, nullText(f.Status), nullText(f.Currency), nullTime(f.CreatedFrom), nullTime(f.CreatedTo)}
	out := &CardPage{Cards: []*Card{}}
	err := s.l.Query(ctx, stmtCountCards, func(rows pgx.Rows) error {
		for rows.Next() {
			if err := rows.Scan(&out.Total); err != nil {
				return err
			}
		}
		return nil
	}, args...)
	if err != nil {
		return nil, err
	}
	skip := int64(page-1) * int64(size)
	if skip >= out.Total {
		return out, nil
	}
	var cardNos []string
	err = s.l.Query(ctx, stmtListCards, func(rows pgx.Rows) error {
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				return err
			}
			cardNos = append(cardNos, n)
		}
		return nil
	}, append(args, skip, size)...)
	if err != nil {
		return nil, err
	}
	byNo, err := s.readCards(ctx, merchant, cardNos, s.l.Query)
	if err != nil {
		return nil, err
	}
	for _, n := range cardNos {
		if c := byNo[n]; c != nil {
			out.Cards = append(out.Cards, c)
		}
	}
	return out, nil
}

func nullText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}
