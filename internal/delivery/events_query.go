package delivery

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Events as a resource (docs/api.md, "Webhooks"): a listing in either
// order with a cursor, and one event with its deliveries and attempts. The
// API, the CLI's `callbacks list` and the console's events page share these
// order rules (ParseOrder), so that "asc" and "desc" mean the same
// everywhere; only the default differs, each front end keeping its own
// (the API oldest first, the CLI and the console newest first).

// Order is the order of a listing, by event sequence.
type Order string

// The orders of a listing.
const (
	OrderAsc  Order = "asc"  // oldest first
	OrderDesc Order = "desc" // newest first
)

// ParseOrder reads an order ("asc" or "desc", exactly); "" gives def.
func ParseOrder(field, s string, def Order) (Order, error) {
	switch Order(s) {
	case "":
		return def, nil
	case OrderAsc, OrderDesc:
		return Order(s), nil
	}
	return "", postings.FieldErrorf(field, "must be asc or desc")
}

// EventQuery is one listing: a filter, an order, and either a page (from
// 1) or a cursor (the events after StartingAfter, in the order), Size at a
// time.
type EventQuery struct {
	Filter        EventFilter
	Order         Order // OrderAsc when ""
	Page, Size    int   // Page is ignored with StartingAfter
	StartingAfter string
}

// ListEvents lists a merchant's events in q's order. Total counts every
// matching event, whatever the page or cursor. An unknown StartingAfter,
// like another merchant's event, is ENOTFOUND event.
func (s *Store) ListEvents(ctx context.Context, merchant int64, q EventQuery) (*EventPage, error) {
	return s.pageWithShop(s.listEvents(ctx, merchant, q))(ctx, merchant)
}

func (s *Store) listEvents(ctx context.Context, merchant int64, q EventQuery) (*EventPage, error) {
	if err := q.Filter.check(); err != nil {
		return nil, err
	}
	if q.Order == "" {
		q.Order = OrderAsc
	}
	if _, err := ParseOrder("order", string(q.Order), OrderAsc); err != nil {
		return nil, err
	}
	if q.StartingAfter == "" && (q.Page < 1 || q.Page > EventsPageMax) {
		return nil, postings.FieldErrorf("page", "must be an integer from 1 to %d", EventsPageMax)
	}
	if q.Size < 1 || q.Size > EventsSizeMax {
		return nil, postings.FieldErrorf("size", "must be an integer from 1 to %d", EventsSizeMax)
	}
	var after *int64
	if q.StartingAfter != "" {
		if err := CheckEventID("startingAfter", q.StartingAfter); err != nil {
			return nil, err
		}
		var seq int64
		err := s.l.DB().NewRaw(`select event_seq from events where merchant_id = ? and event_id = ?`,
			merchant, q.StartingAfter).Scan(ctx, &seq)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, errNoEvent(q.StartingAfter)
		}
		if err != nil {
			return nil, ledger.MapError(err)
		}
		after = &seq
	}
	if q.Filter.empty() {
		return s.eventRange(ctx, merchant, q, after)
	}
	return s.eventsFiltered(ctx, merchant, q, after)
}

// orderSQL is the ORDER BY of each order: a whitelist, never the input.
var orderSQL = map[Order]string{OrderAsc: "e.event_seq", OrderDesc: "e.event_seq desc"}

// eventRange lists without a filter: the sequence is gapless from 1, so a
// page or a cursor is a range of it, read by one index probe whatever the
// page (as Events does).
func (s *Store) eventRange(ctx context.Context, merchant int64, q EventQuery, after *int64) (*EventPage, error) {
	out := &EventPage{List: []DeliveryInfo{}}
	err := s.l.DB().NewRaw(`select last_event_seq from ledger_heads where merchant_id = ?`, merchant).Scan(ctx, &out.Total)
	if errors.Is(err, sql.ErrNoRows) {
		return out, nil
	}
	if err != nil {
		return nil, ledger.MapError(err)
	}
	size := int64(q.Size)
	var lo, hi int64 // the range (lo, hi]
	switch {
	case after != nil && q.Order == OrderAsc:
		lo, hi = *after, *after+size
	case after != nil:
		hi = *after - 1
		lo = hi - size
	case q.Order == OrderAsc:
		lo = int64(q.Page-1) * size
		hi = lo + size
	default:
		hi = out.Total - int64(q.Page-1)*size
		lo = hi - size
	}
	if hi <= 0 {
		return out, nil
	}
	err = s.l.DB().NewRaw(`select `+eventColumns+`
		from events e
		`+eventJoinSQL+`
		where e.merchant_id = ? and e.event_seq > ? and e.event_seq <= ?
		order by `+orderSQL[q.Order], merchant, max(lo, 0), hi).Scan(ctx, &out.List)
	return out, ledger.MapError(err)
}

// eventsFiltered lists with a filter: the matching events are counted, and
// skipped (a page) or started after the cursor's sequence.
func (s *Store) eventsFiltered(ctx context.Context, merchant int64, q EventQuery, after *int64) (*EventPage, error) {
	out := &EventPage{List: []DeliveryInfo{}}
	types := pgdialect.Array(q.Filter.Types)
	if q.Filter.Types == nil {
		types = pgdialect.Array([]string{})
	}
	err := s.l.DB().NewRaw(`select count(*) from events e
		`+eventJoinSQL+`
		where e.merchant_id = ? and `+eventFilterSQL,
		merchant, q.Filter.Status, q.Filter.Status, types, types).Scan(ctx, &out.Total)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	first := int64(0)
	if after == nil {
		first = int64(q.Page-1) * int64(q.Size)
	}
	if first >= out.Total {
		return out, nil
	}
	asc := q.Order == OrderAsc
	err = s.l.DB().NewRaw(`select `+eventColumns+`
		from events e
		`+eventJoinSQL+`
		where e.merchant_id = ? and `+eventFilterSQL+`
		  and (?::bigint is null or (? and e.event_seq > ?::bigint) or (not ? and e.event_seq < ?::bigint))
		order by `+orderSQL[q.Order]+` offset ? limit ?`,
		merchant, q.Filter.Status, q.Filter.Status, types, types, after, asc, after, asc, after, first, q.Size).Scan(ctx, &out.List)
	return out, ledger.MapError(err)
}

// EventDetail is one event with what it carried and how its delivery went:
// the body sent (Payload, the bytes every attempt carries), and its
// deliveries (none for an event never sent; one until webhook endpoints
// exist) with their attempts.
type EventDetail struct {
	DeliveryInfo
	Payload  json.RawMessage
	Attempts []Attempt // of its delivery, oldest first, at most AttemptsMax
	// Endpoints are its deliveries to each webhook endpoint (endpoint one's
	// first, the same as Attempts), with their attempts.
	Endpoints []EndpointDelivery
}

// EventDetail reads one event of the merchant; ENOTFOUND event for an
// unknown id and another merchant's alike.
func (s *Store) EventDetail(ctx context.Context, merchant int64, eventID string) (*EventDetail, error) {
	info, err := s.Event(ctx, merchant, eventID)
	if err != nil {
		return nil, err
	}
	out := &EventDetail{DeliveryInfo: *info}
	var payload string
	if err := s.l.DB().NewRaw(`select payload::text from events where merchant_id = ? and event_seq = ?`,
		merchant, info.EventSeq).Scan(ctx, &payload); err != nil {
		return nil, ledger.MapError(err)
	}
	out.Payload = json.RawMessage(payload)
	if out.Attempts, err = s.Attempts(ctx, merchant, eventID, AttemptsMax); err != nil {
		return nil, err
	}
	if out.Endpoints, err = s.EndpointDeliveries(ctx, merchant, info.EventSeq); err != nil {
		return nil, err
	}
	return out, nil
}
