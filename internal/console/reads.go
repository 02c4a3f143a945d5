package console

import (
	"context"
	"time"
)

// The console's own read-only queries, for lists no domain offers: a
// merchant's cards by status or last four digits, its daily volume, the
// merchants, and the work that is stuck. Every one is bounded by a LIMIT
// and takes validated values as bind parameters.

// cardsPageMax bounds a card search.
const cardsPageMax = 50

// searchCards lists the card numbers of merchant matching q (a whole card
// number or four digits of last4; "" for any) and status ("" for any),
// newest first.
func (s *store) searchCards(ctx context.Context, merchant int64, q, status string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `select card_no from cards
		where merchant_id = $1 and ($2 = '' or card_no = $2 or last4 = $2) and ($3 = '' or status = $3)
		order by created_at desc, card_no limit $4`, merchant, q, status, cardsPageMax)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var no string
		if err := rows.Scan(&no); err != nil {
			return nil, err
		}
		out = append(out, no)
	}
	return out, rows.Err()
}

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
func (s *store) stuckCallbacks(ctx context.Context) ([]stuckItem, error) {
	rows, err := s.db.QueryContext(ctx, `select m.shop_no, e.event_type, e.event_id, d.status, d.attempts, e.created_at,
		       coalesce(d.last_error, coalesce('HTTP ' || d.last_status::text, ''))
		from deliveries d
		join events e on e.merchant_id = d.merchant_id and e.event_seq = d.event_seq
		join merchants m on m.id = d.merchant_id
		where d.status = 'FAILED' or (d.status = 'PENDING' and d.attempts > 0)
		order by e.created_at limit $1`, stuckMax)
	if err != nil {
		return nil, err
	}
	return scanStuck(rows)
}

// stuckRemittances are the remittances not final an hour after they were
// made.
func (s *store) stuckRemittances(ctx context.Context, now time.Time) ([]stuckItem, error) {
	rows, err := s.db.QueryContext(ctx, `select m.shop_no, r.status, r.tx_id, r.status, 0, r.created_at, ''
		from remittances r join merchants m on m.id = r.merchant_id
		where r.status in ('SUBMITTED', 'SCREENING', 'IN_FLIGHT') and r.created_at < $1
		order by r.created_at limit $2`, now.Add(-time.Hour), stuckMax)
	if err != nil {
		return nil, err
	}
	return scanStuck(rows)
}

type rowsScanner interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

func scanStuck(rows rowsScanner) ([]stuckItem, error) {
	defer rows.Close()
	var out []stuckItem
	for rows.Next() {
		var it stuckItem
		if err := rows.Scan(&it.ShopNo, &it.What, &it.ID, &it.Status, &it.Attempts, &it.Since, &it.Detail); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
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
