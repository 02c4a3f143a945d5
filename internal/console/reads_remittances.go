package console

import (
	"context"

	"github.com/paygate/gateway/internal/remittance"
)

// remitRow is one remittance in a merchant's list.
type remitRow = remittance.ListItem

// remitPageMax is how many remittances a page lists (a variable for the
// paging test).
var remitPageMax = 50

// remittancePage lists merchant's remittances newest first, of one status
// ("" for any), those older than before ("" from the newest), a page at a
// time (remittance.Service.List: keyset paging, another merchant's before
// lists nothing). more tells whether another page follows.
func (s *Server) remittancePage(ctx context.Context, merchant int64, status, before string) (rows []remitRow, more bool, err error) {
	rows, err = s.cfg.Remittances.List(ctx, merchant, status, before, remitPageMax+1)
	if err != nil {
		return nil, false, err
	}
	if len(rows) > remitPageMax {
		rows, more = rows[:remitPageMax], true
	}
	return rows, more, nil
}
