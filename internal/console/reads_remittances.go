package console

import (
	"context"
	"time"
)

// remitRow is one remittance in a merchant's list.
type remitRow struct {
	TxID      string
	PayerID   string
	Amount    int64
	Fee       int64
	Currency  string
	Rail      string
	Status    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// remitPageMax is how many remittances a page lists (a variable for the
// paging test).
var remitPageMax = 50

// remittances lists merchant's remittances newest first, of one status
// ("" for any), those older than before ("" from the newest): keyset
// paging on (created_at, tx_id), so a page costs the same however deep,
// and a remittance made meanwhile does not shift the pages. A before of
// another merchant (or unknown) finds no row to start from and lists
// nothing. more tells whether another page follows.
func (s *store) remittances(ctx context.Context, merchant int64, status, before string) (rows []remitRow, more bool, err error) {
	rs, err := s.db.QueryContext(ctx, `select r.tx_id, r.payer_id, r.amount, r.fee, r.currency, r.rail, r.status, r.created_at, r.updated_at
		from remittances r
		where r.merchant_id = $1 and ($2 = '' or r.status = $2)
		  and ($3 = '' or (r.created_at, r.tx_id) < (select b.created_at, b.tx_id from remittances b
		                                             where b.tx_id = $3 and b.merchant_id = $1))
		order by r.created_at desc, r.tx_id desc limit $4`, merchant, status, before, remitPageMax+1)
	if err != nil {
		return nil, false, err
	}
	defer rs.Close()
	for rs.Next() {
		var x remitRow
		if err := rs.Scan(&x.TxID, &x.PayerID, &x.Amount, &x.Fee, &x.Currency, &x.Rail, &x.Status, &x.CreatedAt, &x.UpdatedAt); err != nil {
			return nil, false, err
		}
		rows = append(rows, x)
	}
	if err := rs.Err(); err != nil {
		return nil, false, err
	}
	if len(rows) > remitPageMax {
		rows, more = rows[:remitPageMax], true
	}
	return rows, more, nil
}
