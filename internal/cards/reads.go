package cards

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// CardsMax bounds Cards (the batch balance endpoint takes up to 100).
const CardsMax = 100

// stmtReadCards reads a merchant's cards with their available and held
// balances and what they owe (the receivable's balance, zero or negative).
// Prepared, and written so that its one plan is index probes: the cards by
// primary key, each balance through the card's account (a lateral subquery
// kept apart by "offset 0").
var stmtReadCards = ledger.NewStmt(`
	select ` + cardColumnsOf("c") + `,
	       coalesce((select b.balance from accounts a join balances b on b.account_id = a.id
	                 where a.card_no = c.card_no and a.type = 'card_available' offset 0), 0),
	       coalesce((select b.balance from accounts a join balances b on b.account_id = a.id
	                 where a.card_no = c.card_no and a.type = 'card_held' offset 0), 0),
	       coalesce((select b.balance from accounts a join balances b on b.account_id = a.id
	                 where a.card_no = c.card_no and a.type = 'card_receivable' offset 0), 0)
	from cards c
	where c.merchant_id = $1 and c.card_no = any($2::text[])`)

// Card returns one of the merchant's cards; ENOTFOUND reason "card" if it is
// unknown or another merchant's.
func (s *Service) Card(ctx context.Context, merchant int64, cardNo string) (*Card, error) {
	cards, err := s.readCards(ctx, merchant, []string{cardNo}, s.l.Query)
	if err != nil {
		return nil, err
	}
	c := cards[cardNo]
	if c == nil {
		return nil, errCardNotFound()
	}
	return c, nil
}

// Cards returns the merchant's cards among cardNos, by card number; unknown
// and foreign cards are absent from the map. It is the batch balance read,
// which the standby may serve (ledger.QueryRead, DATABASE_READ_URL); one
// card's read stays on the primary.
func (s *Service) Cards(ctx context.Context, merchant int64, cardNos []string) (map[string]*Card, error) {
	if len(cardNos) > CardsMax {
		return nil, postings.FieldErrorf("cardNos", "at most %d cards per call", CardsMax)
	}
	return s.readCards(ctx, merchant, cardNos, s.l.QueryRead)
}

// queryFunc is ledger.Query or ledger.QueryRead.
type queryFunc func(ctx context.Context, s *ledger.Stmt, scan func(pgx.Rows) error, args ...any) error

// readCards reads the merchant's cards among cardNos (a bounded list: the
// callers cap it), by card number, through query.
func (s *Service) readCards(ctx context.Context, merchant int64, cardNos []string, query queryFunc) (map[string]*Card, error) {
	out := make(map[string]*Card, len(cardNos))
	err := query(ctx, stmtReadCards, func(rows pgx.Rows) error {
		for rows.Next() {
			var r cardRow
			var available, held, receivable int64
			if err := r.scan(rows, &available, &held, &receivable); err != nil {
				return err
			}
			out[r.CardNo] = cardFromRow(&r, available, held)
			out[r.CardNo].Receivable = -receivable
		}
		return nil
	}, merchant, cardNos)
	if err != nil {
		return nil, err
	}
	return out, nil
}
