package console

import (
	"context"
	"time"
)

// The pages' lists: a merchant's cards by status or last four digits and
// the work that is stuck, read through their owners' APIs (cards,
// delivery, remittance); the daily volume and the merchants are still read
// here with SQL, bounded by a LIMIT, until the bill and the merchants have
// their packages (internal/archtest/tables_test.go, tableAllowed).

// cardsPageMax bounds a card search.
const cardsPageMax = 50

// volumeDay is the money that moved on a merchant's billable accounts on
// one UTC day in one currency and entry kind: the sum of the lines' absolute
// amounts, in minor units.
type volumeDay struct {
	Day      time.Time
	Currency string
	Kind     string
	Minor    int64
	Lines    int64
}

// dailyVolume reads [from, to) by day, currency and kind. Reading a day
// range of bill_lines is one seek of bill_lines_created_idx.
func (s *store) dailyVolume(ctx context.Context, merchant int64, from, to time.Time) ([]volumeDay, error) {
	rows, err := s.db.QueryContext(ctx, `select date_trunc('day', created_at at time zone 'UTC') as day, currency, kind,
		       sum(abs(amount))::bigint, count(*)
		from bill_lines where merchant_id = $1 and created_at >= $2 and created_at < $3
		group by 1, 2, 3 order by 1, 2, 3 limit 10000`, merchant, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []volumeDay
	for rows.Next() {
		var v volumeDay
		if err := rows.Scan(&v.Day, &v.Currency, &v.Kind, &v.Minor, &v.Lines); err != nil {
			return nil, err
		}
		v.Day = time.Date(v.Day.Year(), v.Day.Month(), v.Day.Day(), 0, 0, 0, 0, time.UTC)
		out = append(out, v)
	}
	return out, rows.Err()
}

// merchantRow is one merchant in the operator's list.
type merchantRow struct {
	ID         int64
	ShopNo     string
	Name       string
	Status     string
	KYBTier    string
	Currencies []string
	CreatedAt  time.Time
}

const merchantsPageMax = 100

// merchants lists merchants by id from after (0: the first), a page at a
// time.
func (s *store) merchants(ctx context.Context, after int64) ([]merchantRow, error) {
	rows, err := s.db.QueryContext(ctx, `select id, shop_no, name, status, kyb_tier, array_to_string(currencies, ','), created_at
		from merchants where id > $1 order by id limit $2`, after, merchantsPageMax)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []merchantRow
	for rows.Next() {
		var m merchantRow
		var curs string
		if err := rows.Scan(&m.ID, &m.ShopNo, &m.Name, &m.Status, &m.KYBTier, &curs, &m.CreatedAt); err != nil {
			return nil, err
		}
		m.Currencies = splitComma(curs)
		out = append(out, m)
	}
	return out, rows.Err()
}

// stuckItem is a callback or a remittance that needs a look.
type stuckItem struct {
	ShopNo   string
	What     string // the event type or the remittance's status
	ID       string // the event id or the remittance's txId
	Status   string
	Attempts int
	Since    time.Time
	Detail   string
}

const stuckMax = 100

// stuckCallbacks are the deliveries that failed, or are still pending
// after a retry: their receivers need a look.
func (s *Server) stuckCallbacks(ctx context.Context) ([]stuckItem, error) {
	ds, err := s.cfg.Deliveries.Stuck(ctx, stuckMax)
	if err != nil {
		return nil, err
	}
	out := make([]stuckItem, 0, len(ds))
	for _, d := range ds {
		out = append(out, stuckItem{ShopNo: d.ShopNo, What: d.EventType, ID: d.EventID, Status: d.Status,
			Attempts: d.Attempts, Since: d.CreatedAt, Detail: d.Detail})
	}
	return out, nil
}

// stuckRemittances are the remittances not final an hour after they were
// made.
func (s *Server) stuckRemittances(ctx context.Context, now time.Time) ([]stuckItem, error) {
	rs, err := s.cfg.Remittances.Stuck(ctx, now.Add(-time.Hour), stuckMax)
	if err != nil {
		return nil, err
	}
	out := make([]stuckItem, 0, len(rs))
	for _, r := range rs {
		out = append(out, stuckItem{ShopNo: r.ShopNo, What: r.Status, ID: r.TxID, Status: r.Status, Since: r.CreatedAt})
	}
	return out, nil
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}
