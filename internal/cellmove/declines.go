package cellmove

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// The log of the authorizations the router declined 91 during a move's
// pause (sql/, "cellmove declines"; docs/network.md, "Authorization"): an
// issuer keeps what it declined or stood in for, so operators see after
// the move which of the merchant's cardholders were turned away, and when.

// Decline is one authorization declined because its card's merchant was
// in a move's pause: the network's message id, the card, the amount as
// the message gave it (minor units of Currency) and the time.
type Decline struct {
	MoveID     int64     `bun:"move_id" json:"moveId"`
	ShopNo     string    `bun:"shop_no" json:"shopNo"` // the move's merchant; "" when the move is unknown here
	MessageID  string    `bun:"message_id" json:"messageId"`
	CardNo     string    `bun:"card_no" json:"cardNo"`
	Amount     int64     `bun:"amount" json:"amount"`
	Currency   string    `bun:"currency" json:"currency"`
	Code       string    `bun:"code" json:"code"`
	DeclinedAt time.Time `bun:"declined_at" json:"declinedAt"`
}

// RecordDecline records in db, the cell whose forwarding pauses d's card,
// an authorization about to be declined 91. paused is false, and nothing
// is written, when the card's forwarding is not paused any more (the
// move switched or rolled back since the router read it): the caller
// must not answer 91 then. Reading the forwarding and writing the row is
// one statement, so a row exists only for a card paused at that moment.
// A repeat of the same message (the network's retry) is recorded once,
// and paused is true again. d.MoveID is ignored: the forwarding's is
// used.
func RecordDecline(ctx context.Context, db bun.IDB, d Decline) (paused bool, err error) {
	var n int
	err = db.NewRaw(`with f as (select move_id from cellmove_forwards where id = ?0 and to_cell is null),
		ins as (insert into cellmove_declines (move_id, message_id, card_no, amount, currency, declined_at)
			select move_id, ?1, ?0, ?2, ?3, ?4 from f
			on conflict (move_id, message_id) do nothing)
		select count(*) from f`, d.CardNo, d.MessageID, d.Amount, d.Currency, d.DeclinedAt.UTC()).Scan(ctx, &n)
	return n > 0, err
}

// Declines are the declines recorded in db, the oldest first: the
// merchant's with shopNo, or every merchant's with "".
func Declines(ctx context.Context, db bun.IDB, shopNo string) ([]Decline, error) {
	return declines(ctx, db, shopNo, 0)
}

// declines are db's declines of the merchant with shopNo ("": any) in the
// move moveID (0: any).
func declines(ctx context.Context, db bun.IDB, shopNo string, moveID int64) ([]Decline, error) {
	out := []Decline{}
	err := db.NewRaw(`select d.move_id, coalesce(m.shop_no, '') as shop_no, d.message_id, d.card_no, d.amount, d.currency, d.code, d.declined_at
		from cellmove_declines d left join cellmove_moves m on m.id = d.move_id
		where (?0 = '' or m.shop_no = ?0) and (?1 = 0 or d.move_id = ?1)
		order by d.declined_at, d.move_id, d.message_id`, shopNo, moveID).Scan(ctx, &out)
	for i := range out {
		out[i].DeclinedAt = out[i].DeclinedAt.UTC()
	}
	return out, err
}
