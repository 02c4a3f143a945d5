package delivery

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// The merchant's view of its events (GET /shop/webhook/events) and the
// replays both front ends share: the API's POST /shop/webhook/replay and the
// operator's `callbacks list` and `callbacks replay` call these, so that the
// rules (which statuses, which range, what a replay resets) have one home.

// DeliveryNotSent is the status of an event that had no callback URL: it is
// kept and listed, never sent (until a replay finds a URL).
const DeliveryNotSent = "NOT_SENT"

// Bounds of the listing and of a replay of failed events.
const (
	EventsPageMax        = 1_000_000
	EventsSizeMax        = 500
	EventTypesMax        = 16 // type filters in one listing
	eventTypeBytesMax    = 64
	ReplayRangeMax       = 31 * 24 * time.Hour
	ReplayFailedMax      = 1000 // failed events replayed by one call
	ReplayFailedDefault  = 1000
	eventIDBytesMax      = 64
	eventTypeSeparator   = '.'
	eventTypeSegmentsMax = 2
)

// CheckStatus refuses a delivery status that is not one of PENDING,
// DELIVERED, FAILED, NOT_SENT ("" means any).
func CheckStatus(field, s string) error {
	switch s {
	case "", DeliveryPending, DeliveryDelivered, DeliveryFailed, DeliveryNotSent:
		return nil
	}
	return postings.FieldErrorf(field, "must be PENDING, DELIVERED, FAILED or NOT_SENT")
}

// CheckEventType refuses what cannot be an event type: lower-case words
// and underscores, two of them joined by a dot (card.created), at most 64
// bytes. A well-formed type that no event has simply matches nothing.
func CheckEventType(field, s string) error {
	bad := postings.FieldErrorf(field, "must be an event type such as card.created (a-z and _, one dot, at most %d bytes)", eventTypeBytesMax)
	if s == "" || len(s) > eventTypeBytesMax {
		return bad
	}
	dots, prev := 0, byte(eventTypeSeparator)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == eventTypeSeparator:
			if prev == eventTypeSeparator {
				return bad
			}
			dots++
		case (c >= 'a' && c <= 'z') || c == '_':
		default:
			return bad
		}
		prev = c
	}
	if dots != eventTypeSegmentsMax-1 || prev == eventTypeSeparator {
		return bad
	}
	return nil
}

// CheckEventID refuses what cannot be an event id: 1 to 64 printable ASCII
// characters without spaces (the gateway's ids are evt_ and base64url).
func CheckEventID(field, s string) error {
	if s == "" || len(s) > eventIDBytesMax {
		return postings.FieldErrorf(field, "must have 1 to %d characters", eventIDBytesMax)
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= 0x20 || s[i] >= 0x7f {
			return postings.FieldErrorf(field, "must be printable ASCII without spaces")
		}
	}
	return nil
}

// EventFilter selects events: by delivery status ("" any) and by type (none:
// any; several: any of them).
type EventFilter struct {
	Status string
	Types  []string
}

func (f EventFilter) check() error {
	if err := CheckStatus("status", f.Status); err != nil {
		return err
	}
	if len(f.Types) > EventTypesMax {
		return postings.FieldErrorf("type", "has more than %d types", EventTypesMax)
	}
	for _, t := range f.Types {
		if err := CheckEventType("type", t); err != nil {
			return err
		}
	}
	return nil
}

func (f EventFilter) empty() bool { return f.Status == "" && len(f.Types) == 0 }

// EventPage is one page of a merchant's events, oldest first.
type EventPage struct {
	Total int64
	List  []DeliveryInfo
}

// eventColumns are the columns of a DeliveryInfo, from events e and
// deliveries d, endpoint one's (left-joined: it may have none); the status
// is over every endpoint (event_status.go).
const eventColumns = `e.event_seq, e.event_id, e.event_type, e.subject, coalesce(d.url, '') as url,
	` + eventStatusSQL + ` as status, coalesce(d.attempts, 0) as attempts, d.next_attempt_at,
	d.last_attempt_at, d.last_status, d.last_error, d.delivered_at, e.created_at`

// eventFilterSQL is the filter of a listing; arguments: status twice, types
// twice.
const eventFilterSQL = `(?::text = '' or ` + eventStatusSQL + ` = ?)
	and (cardinality(?::text[]) = 0 or e.event_type = any(?::text[]))`

// Events lists a merchant's events oldest first (event_seq), page by page:
// a new event goes after every existing one, so it never shifts an earlier
// page. Without a filter a page is a range of the gapless event sequence
// (an index probe whatever the page); with one, the matching events are
// counted and skipped in sequence order.
func (s *Store) Events(ctx context.Context, merchant int64, f EventFilter, page, size int) (*EventPage, error) {
	return s.pageWithShop(s.events(ctx, merchant, f, page, size))(ctx, merchant)
}

func (s *Store) events(ctx context.Context, merchant int64, f EventFilter, page, size int) (*EventPage, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	if page < 1 || page > EventsPageMax {
		return nil, postings.FieldErrorf("page", "must be an integer from 1 to %d", EventsPageMax)
	}
	if size < 1 || size > EventsSizeMax {
		return nil, postings.FieldErrorf("size", "must be an integer from 1 to %d", EventsSizeMax)
	}
	out := &EventPage{List: []DeliveryInfo{}}
	db := s.l.DB()
	types := pgdialect.Array(f.Types)
	if f.Types == nil {
		types = pgdialect.Array([]string{})
	}
	first := int64(page-1) * int64(size)
	var err error
	if f.empty() {
		err = db.NewRaw(`select last_event_seq from ledger_heads where merchant_id = ?`, merchant).Scan(ctx, &out.Total)
		if errors.Is(err, sql.ErrNoRows) {
			return out, nil
		}
		if err != nil {
			return nil, ledger.MapError(err)
		}
		err = db.NewRaw(`select `+eventColumns+`
			from events e
			`+eventJoinSQL+`
			where e.merchant_id = ? and e.event_seq > ? and e.event_seq <= ?
			order by e.event_seq`, merchant, first, first+int64(size)).Scan(ctx, &out.List)
		return out, ledger.MapError(err)
	}
	err = db.NewRaw(`select count(*) from events e
		`+eventJoinSQL+`
		where e.merchant_id = ? and `+eventFilterSQL,
		merchant, f.Status, f.Status, types, types).Scan(ctx, &out.Total)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	if first >= out.Total {
		return out, nil
	}
	err = db.NewRaw(`select `+eventColumns+`
		from events e
		`+eventJoinSQL+`
		where e.merchant_id = ? and `+eventFilterSQL+`
		order by e.event_seq offset ? limit ?`,
		merchant, f.Status, f.Status, types, types, first, size).Scan(ctx, &out.List)
	return out, ledger.MapError(err)
}

// Event is one event of a merchant with its delivery; ENOTFOUND event for
// an unknown id and for another merchant's alike.
func (s *Store) Event(ctx context.Context, merchant int64, eventID string) (*DeliveryInfo, error) {
	out, err := s.event(ctx, merchant, eventID)
	if err != nil {
		return nil, err
	}
	return out, s.complete(ctx, merchant, []*DeliveryInfo{out})
}

func (s *Store) event(ctx context.Context, merchant int64, eventID string) (*DeliveryInfo, error) {
	if err := CheckEventID("eventId", eventID); err != nil {
		return nil, err
	}
	var out DeliveryInfo
	err := s.l.DB().NewRaw(`select `+eventColumns+`
		from events e
		`+eventJoinSQL+`
		where e.merchant_id = ? and e.event_id = ?`, merchant, eventID).Scan(ctx, &out)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNoEvent(eventID)
	}
	if err != nil {
		return nil, ledger.MapError(err)
	}
	return &out, nil
}

func errNoEvent(eventID string) error {
	return postings.ReasonErrorf(postings.ENOTFOUND, postings.ReasonEvent, "no event %s for this merchant", eventID)
}

// FailedRange selects the failed deliveries a replay sends again: those of
// events created in [From, To), at most Limit of them, oldest first. The
// zero From and To mean every failed event (the operator's --failed; the
// API always gives a range).
type FailedRange struct {
	From, To time.Time
	Limit    int
}

// Check refuses a range that is empty, reversed, longer than ReplayRangeMax,
// or a limit outside [1, ReplayFailedMax]; the API calls it on what the
// merchant sent, naming its fields.
func (r FailedRange) Check() error {
	if r.From.IsZero() || r.To.IsZero() {
		return postings.FieldErrorf("from, to", "are required")
	}
	if !r.To.After(r.From) {
		return postings.FieldErrorf("to", "must be after from")
	}
	if r.To.Sub(r.From) > ReplayRangeMax {
		return postings.FieldErrorf("to", "must be within %d days of from", int(ReplayRangeMax/(24*time.Hour)))
	}
	if r.Limit < 1 || r.Limit > ReplayFailedMax {
		return postings.FieldErrorf("limit", "must be an integer from 1 to %d", ReplayFailedMax)
	}
	return nil
}

// ReplayResult is what a replay of failed events did: how many it put back
// to pending, and whether failed events of the range remain (past the
// limit: call again, the replayed ones are no longer failed).
type ReplayResult struct {
	Replayed int64
	More     bool
}
