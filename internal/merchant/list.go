package merchant

import (
	"context"

	"github.com/paygate/gateway/ledger"
)

// ListMax bounds a page of List.
const ListMax = 100

// List is the merchants by id from after (0: the first), at most limit
// (at most ListMax): the operator's list, a page at a time.
func (s *Service) List(ctx context.Context, after int64, limit int) ([]Merchant, error) {
	limit = min(max(limit, 1), ListMax)
	var rows []merchantRow
	err := s.l.DB().NewRaw(`select `+merchantColumns+` from merchants m where m.id > ? order by m.id limit ?`,
		after, limit).Scan(ctx, &rows)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	out := make([]Merchant, len(rows))
	for i := range rows {
		out[i] = rows[i].toMerchant()
	}
	return out, nil
}
