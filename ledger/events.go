package ledger

import (
	"database/sql"
	"encoding/json"
	"time"

	"github.com/paygate/gateway/internal/database"
	"github.com/uptrace/bun"
)

// The outbox: every change a merchant is told about is an event, written in
// the transaction of the change with the merchant's next event sequence,
// and, when it has a target URL, a delivery row that the callback
// dispatcher (internal/delivery) claims and sends (docs/callbacks.md).

// Event is what a command tells the merchant about.
type Event struct {
	Type string // "card.created", "remittance.status", …
	// Subject is the card or remittance the event is about: the deliveries
	// of one subject are sent in order.
	Subject string
	// CallbackURL is the URL the request that caused the event gave; ""
	// sends the event to the merchant's configured URL, if any.
	CallbackURL string
	// RequestURLOnly sends the event only to CallbackURL, never to the
	// merchant's URL (card.created: the spec sends it to the create
	// request's URL alone).
	RequestURLOnly bool
	// Data is the event's object, as JSON.
	Data any
}

// EventPayload is the JSON body of a callback, final when the event is
// written: a retry sends the same bytes (with a fresh signature).
type EventPayload struct {
	EventID   string          `json:"event_id"`
	EventType string          `json:"event_type"`
	CreatedAt string          `json:"created_at"`
	ShopNo    string          `json:"shopNo"`
	Sequence  int64           `json:"sequence"`
	Data      json.RawMessage `json:"data"`
}

// deliveryPending is the status of a delivery not yet sent (the delivery
// domain owns the others).
const deliveryPending = "PENDING"

type eventRow struct {
	bun.BaseModel `bun:"table:events"`
	MerchantID    int64           `bun:"merchant_id,pk"`
	EventSeq      int64           `bun:"event_seq,pk"`
	EventID       string          `bun:"event_id"`
	EventType     string          `bun:"event_type"`
	Subject       string          `bun:"subject"`
	Payload       json.RawMessage `bun:"payload,type:jsonb"`
	CallbackURL   sql.NullString  `bun:"callback_url"`
	CreatedAt     time.Time       `bun:"created_at"`
}

type deliveryRow struct {
	MerchantID    int64
	EventSeq      int64
	Subject       string
	URL           string
	Status        string
	Attempts      int
	WindowStart   time.Time
	NextAttemptAt bun.NullTime
}

// Emit appends an outbox event for merchant m, whose head the batch holds.
func (tx *Tx) Emit(m int64, ev Event) error {
	h, err := tx.head(m)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(ev.Data)
	if err != nil {
		return err
	}
	tx.touchHead(h)
	h.eventSeq++
	p := EventPayload{
		EventID: "evt_" + database.RandomID(24), EventType: ev.Type, CreatedAt: tx.now.UTC().Format(time.RFC3339),
		ShopNo: h.merchant.ShopNo, Sequence: h.eventSeq, Data: raw,
	}
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	tx.outbox = append(tx.outbox, eventRow{
		MerchantID: h.merchant.ID, EventSeq: h.eventSeq, EventID: p.EventID, EventType: ev.Type,
		Subject: ev.Subject, Payload: body, CallbackURL: database.NullString(ev.CallbackURL), CreatedAt: tx.now,
	})
	if target := deliveryTarget(&ev, h.merchant.CallbackURL); target != "" {
		tx.deliveries = append(tx.deliveries, deliveryRow{
			MerchantID: h.merchant.ID, EventSeq: h.eventSeq, Subject: ev.Subject, URL: target, Status: deliveryPending,
			WindowStart: tx.now, NextAttemptAt: bun.NullTime{Time: tx.now},
		})
	}
	return nil
}

// deliveryTarget is where an event is sent (docs/callbacks.md): the URL the
// request that caused it gave, else the merchant's configured URL — unless
// the event goes to its request's URL alone.
func deliveryTarget(ev *Event, merchantURL string) string {
	switch {
	case ev.CallbackURL != "":
		return ev.CallbackURL
	case ev.RequestURLOnly:
		return ""
	default:
		return merchantURL
	}
}

var stmtInsertEvents = NewStmt(`
	insert into events (merchant_id, event_seq, event_id, event_type, subject, payload, callback_url, created_at)
	select m, seq, id, type, subject, payload::jsonb, url, at
	from unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[])
	     as v(m, seq, id, type, subject, payload, url, at)`)

var stmtInsertDeliveries = NewStmt(`
	insert into deliveries (merchant_id, event_seq, subject, url, status, attempts, window_start, next_attempt_at)
	select * from unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::integer[],
	                     $7::timestamptz[], $8::timestamptz[])`)

// flushEvents queues the writes of the batch's events and deliveries.
func (tx *Tx) flushEvents(p *Pipeline) {
	if n := len(tx.outbox); n > 0 {
		ms, seqs := make([]int64, n), make([]int64, n)
		ids, types, subjects, payloads := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		urls := make([]*string, n)
		ats := make([]time.Time, n)
		for i, ev := range tx.outbox {
			ms[i], seqs[i], ids[i], types[i], subjects[i] = ev.MerchantID, ev.EventSeq, ev.EventID, ev.EventType, ev.Subject
			payloads[i], urls[i], ats[i] = string(ev.Payload), database.NullText(ev.CallbackURL), ev.CreatedAt
		}
		p.ExecRows(stmtInsertEvents, n, "events", ms, seqs, ids, types, subjects, payloads, urls, ats)
	}
	if n := len(tx.deliveries); n > 0 {
		ms, seqs := make([]int64, n), make([]int64, n)
		subjects, urls, statuses := make([]string, n), make([]string, n), make([]string, n)
		attempts := make([]int32, n)
		windows := make([]time.Time, n)
		nexts := make([]*time.Time, n)
		for i, d := range tx.deliveries {
			ms[i], seqs[i], subjects[i], urls[i], statuses[i] = d.MerchantID, d.EventSeq, d.Subject, d.URL, d.Status
			attempts[i], windows[i], nexts[i] = int32(d.Attempts), d.WindowStart, database.NullTime(d.NextAttemptAt)
		}
		p.ExecRows(stmtInsertDeliveries, n, "deliveries", ms, seqs, subjects, urls, statuses, attempts, windows, nexts)
	}
}
