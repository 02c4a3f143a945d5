package api

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/internal/callbackurl"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/postings"
)

// The merchant's webhooks (docs/api.md, "Webhooks"): its default callback
// URL, its events with their delivery, and replays. The listing and the
// replays are the deliveries store's, which the operator's `callbacks`
// commands call too.

// Bounds of the webhook endpoints' inputs (the store checks its own again).
const (
	eventsPageDefault = 1
	eventsSizeDefault = 50
	// replayTimeYearMin and Max keep a replay's range where PostgreSQL's
	// timestamptz and the events' times are.
	replayTimeYearMin = 1970
	replayTimeYearMax = 9999
)

// webhookView is the answer of GET and PUT /shop/webhook.
type webhookView struct {
	// CallbackURL is the default target of the merchant's callbacks; null
	// when it has none (events are then kept, listed NOT_SENT, not sent).
	CallbackURL *string `json:"callbackUrl"`
}

func newWebhookView(url string) webhookView {
	if url == "" {
		return webhookView{}
	}
	return webhookView{CallbackURL: &url}
}

// handleWebhookGet answers GET /shop/webhook.
func handleWebhookGet() gin.HandlerFunc {
	return func(c *gin.Context) {
		writeOK(c, newWebhookView(merchantOf(c).CallbackURL))
	}
}

// handleWebhookPut answers PUT /shop/webhook {"callbackUrl": …}: the URL is
// checked as every callback URL is when given (400 naming callbackUrl);
// null or "" clears it. The request is naturally idempotent; an
// Idempotency-Key is claimed like a read's (another request with it is
// 1008).
func handleWebhookPut(l WebhookSettings, keys ReadKeys, allow callbackurl.AllowList) gin.HandlerFunc {
	return func(c *gin.Context) {
		var url string
		if err := decodeObject(bodyOf(c), []field{{name: "callbackUrl", required: false, into: &url}}); err != nil {
			writeError(c, err)
			return
		}
		if url != "" {
			if err := checkCallbackURL("callbackUrl", url, allow); err != nil {
				writeError(c, err)
				return
			}
		}
		ctx := c.Request.Context()
		m := merchantOf(c)
		if err := keys.ClaimReadIdempotency(ctx, m.ID, idempotencyOf(c)); err != nil {
			writeError(c, err)
			return
		}
		if err := l.SetCallbackURL(ctx, m.ID, url); err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, newWebhookView(url))
	}
}

// eventView is one event with its delivery.
type eventView struct {
	EventID        string  `json:"eventId"`
	EventType      string  `json:"eventType"`
	Sequence       int64   `json:"sequence"`
	CreatedAt      string  `json:"createdAt"`
	Status         string  `json:"status"` // PENDING, DELIVERED, FAILED, NOT_SENT
	URL            *string `json:"url"`
	Attempts       int     `json:"attempts"`
	NextAttemptAt  *string `json:"nextAttemptAt"`
	LastAttemptAt  *string `json:"lastAttemptAt"`
	LastHTTPStatus *int    `json:"lastHttpStatus"`
	LastError      *string `json:"lastError"`
	DeliveredAt    *string `json:"deliveredAt"`
}

func newEventView(d *delivery.DeliveryInfo) eventView {
	v := eventView{EventID: d.EventID, EventType: d.EventType, Sequence: d.EventSeq, CreatedAt: timestamp(d.CreatedAt),
		Status: d.Status, Attempts: d.Attempts, NextAttemptAt: timestampOrNil(d.NextAttemptAt),
		LastAttemptAt: timestampOrNil(d.LastAttemptAt), LastHTTPStatus: d.LastStatus, LastError: d.LastError,
		DeliveredAt: timestampOrNil(d.DeliveredAt)}
	if d.URL != "" {
		u := d.URL
		v.URL = &u
	}
	return v
}

type eventListView struct {
	Total int64       `json:"total"`
	List  []eventView `json:"list"`
}

// parseEventFilter reads status (once) and type (repeatable, or
// comma-separated) of GET /shop/webhook/events.
func parseEventFilter(c *gin.Context) (delivery.EventFilter, error) {
	var f delivery.EventFilter
	s, _, err := queryValue(c, "status")
	if err != nil {
		return f, err
	}
	f.Status = s
	for _, v := range c.QueryArray("type") {
		for _, t := range strings.Split(v, ",") {
			if len(f.Types) == delivery.EventTypesMax {
				return f, postings.FieldErrorf("type", "has more than %d types", delivery.EventTypesMax)
			}
			if err := delivery.CheckEventType("type", t); err != nil {
				return f, err
			}
			f.Types = append(f.Types, t)
		}
	}
	return f, delivery.CheckStatus("status", f.Status)
}

// handleWebhookEvents answers
// GET /shop/webhook/events?page=&size=&status=&type=&order=&startingAfter=:
// the merchant's events, oldest first unless order=desc, a page at a time
// or after a cursor (an event id; not with page).
func handleWebhookEvents(l Webhooks) gin.HandlerFunc {
	return func(c *gin.Context) {
		q, err := parseEventQuery(c)
		if err != nil {
			writeError(c, err)
			return
		}
		p, err := l.ListEvents(c.Request.Context(), merchantOf(c).ID, q)
		if err != nil {
			writeError(c, err)
			return
		}
		v := eventListView{Total: p.Total, List: make([]eventView, len(p.List))}
		for i := range p.List {
			v.List[i] = newEventView(&p.List[i])
		}
		writeOK(c, v)
	}
}

// parseEventQuery reads the listing's query; every refusal is a 400 naming
// its parameter.
func parseEventQuery(c *gin.Context) (delivery.EventQuery, error) {
	q := delivery.EventQuery{}
	var err error
	if q.Filter, err = parseEventFilter(c); err != nil {
		return q, err
	}
	var hasPage bool
	if q.Page, hasPage, err = queryInt(c, "page", 1, delivery.EventsPageMax, eventsPageDefault); err != nil {
		return q, err
	}
	if q.Size, _, err = queryInt(c, "size", 1, delivery.EventsSizeMax, eventsSizeDefault); err != nil {
		return q, err
	}
	order, _, err := queryValue(c, "order")
	if err != nil {
		return q, err
	}
	// The API's default stays oldest first, as before the parameter.
	if q.Order, err = delivery.ParseOrder("order", order, delivery.OrderAsc); err != nil {
		return q, err
	}
	after, hasAfter, err := queryValue(c, "startingAfter")
	if err != nil || !hasAfter {
		return q, err
	}
	if err := delivery.CheckEventID("startingAfter", after); err != nil {
		return q, err
	}
	if hasPage {
		return q, postings.FieldErrorf("page", "cannot be given with startingAfter")
	}
	q.StartingAfter = after
	return q, nil
}

// eventDetailView is GET /shop/webhook/events/{eventId}: the event as
// listed, the body it carries (data: the JSON object every attempt sends),
// and its deliveries with their attempts.
type eventDetailView struct {
	eventView
	Data       json.RawMessage     `json:"data"`
	Deliveries []eventDeliveryView `json:"deliveries"`
}

// eventDeliveryView is one delivery of an event: its target, state and
// attempts (oldest first; a replay starts a new window numbered from 1).
// One per webhook endpoint the event went to (endpoint one, the default
// URL, first), none when it was not sent.
type eventDeliveryView struct {
	EndpointID     string             `json:"endpointId,omitempty"`
	URL            string             `json:"url"`
	Status         string             `json:"status"`
	Attempts       int                `json:"attempts"`
	NextAttemptAt  *string            `json:"nextAttemptAt"`
	LastAttemptAt  *string            `json:"lastAttemptAt"`
	LastHTTPStatus *int               `json:"lastHttpStatus"`
	LastError      *string            `json:"lastError"`
	DeliveredAt    *string            `json:"deliveredAt"`
	AttemptList    []eventAttemptView `json:"attemptList"`
}

type eventAttemptView struct {
	WindowStart   string  `json:"windowStart"`
	Attempt       int     `json:"attempt"`
	At            string  `json:"at"`
	DurationMs    int     `json:"durationMs"`
	HTTPStatus    *int    `json:"httpStatus"`
	Error         *string `json:"error"`
	Outcome       string  `json:"outcome"`
	NextAttemptAt *string `json:"nextAttemptAt"`
}

func newEventDetailView(d *delivery.EventDetail) eventDetailView {
	ev := newEventView(&d.DeliveryInfo)
	v := eventDetailView{eventView: ev, Data: d.Payload, Deliveries: []eventDeliveryView{}}
	if d.Status == delivery.DeliveryNotSent && len(d.Endpoints) == 0 {
		return v
	}
	dv := eventDeliveryView{URL: d.URL, Status: ev.Status, Attempts: ev.Attempts, NextAttemptAt: ev.NextAttemptAt,
		LastAttemptAt: ev.LastAttemptAt, LastHTTPStatus: ev.LastHTTPStatus, LastError: ev.LastError, DeliveredAt: ev.DeliveredAt,
		AttemptList: make([]eventAttemptView, len(d.Attempts))}
	for i, a := range d.Attempts {
		dv.AttemptList[i] = eventAttemptView{WindowStart: timestamp(a.WindowStart), Attempt: a.Attempt, At: timestamp(a.At),
			DurationMs: a.DurationMs, HTTPStatus: a.HTTPStatus, Error: a.Error, Outcome: a.Outcome,
			NextAttemptAt: timestampOrNil(a.NextAttemptAt)}
	}
	if len(d.Endpoints) == 0 {
		v.Deliveries = append(v.Deliveries, dv)
		return v
	}
	for _, ed := range d.Endpoints {
		v.Deliveries = append(v.Deliveries, newEndpointDeliveryView(&ed))
	}
	return v
}

// handleWebhookEvent answers GET /shop/webhook/events/{eventId}; another
// merchant's id is answered exactly like an unknown one (1301).
func handleWebhookEvent(l Webhooks) gin.HandlerFunc {
	return func(c *gin.Context) {
		id := c.Param("eventId")
		if err := delivery.CheckEventID("eventId", id); err != nil {
			writeError(c, err)
			return
		}
		d, err := l.EventDetail(c.Request.Context(), merchantOf(c).ID, id)
		if err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, newEventDetailView(d))
	}
}

// handleWebhookReplay answers POST /shop/webhook/events/replay {"eventId"}:
// the event is sent again with the same event_id; another merchant's id is
// answered exactly like an unknown one (1301).
func handleWebhookReplay(l Webhooks, keys ReadKeys) gin.HandlerFunc {
	return func(c *gin.Context) {
		var id string
		if err := decodeObject(bodyOf(c), []field{{name: "eventId", required: true, into: &id}}); err != nil {
			writeError(c, err)
			return
		}
		if err := delivery.CheckEventID("eventId", id); err != nil {
			writeError(c, err)
			return
		}
		ctx := c.Request.Context()
		m := merchantOf(c)
		if err := keys.ClaimReadIdempotency(ctx, m.ID, idempotencyOf(c)); err != nil {
			writeError(c, err)
			return
		}
		d, err := l.ReplayEvent(ctx, m.ID, id)
		if err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, newEventView(d))
	}
}

type replayFailedView struct {
	Replayed int64 `json:"replayed"`
	More     bool  `json:"more"`
}

// handleWebhookReplayFailed answers POST /shop/webhook/events/replay-failed
// {"from","to","limit"}: the failed events created in [from, to) are sent
// again, oldest first, at most limit (default and maximum 1000) of them;
// more says whether failed events of the range remain.
func handleWebhookReplayFailed(l Webhooks, keys ReadKeys) gin.HandlerFunc {
	return func(c *gin.Context) {
		var from, to string
		var limit amountText
		err := decodeObject(bodyOf(c), []field{{name: "from", required: true, into: &from},
			{name: "to", required: true, into: &to}, {name: "limit", into: &limit}})
		if err != nil {
			writeError(c, err)
			return
		}
		r := delivery.FailedRange{Limit: delivery.ReplayFailedDefault}
		if r.From, err = parseReplayTime("from", from); err != nil {
			writeError(c, err)
			return
		}
		if r.To, err = parseReplayTime("to", to); err != nil {
			writeError(c, err)
			return
		}
		if limit != "" {
			if r.Limit, err = parseIntField("limit", limit, 1, delivery.ReplayFailedMax); err != nil {
				writeError(c, err)
				return
			}
		}
		if err := r.Check(); err != nil {
			writeError(c, err)
			return
		}
		ctx := c.Request.Context()
		m := merchantOf(c)
		if err := keys.ClaimReadIdempotency(ctx, m.ID, idempotencyOf(c)); err != nil {
			writeError(c, err)
			return
		}
		res, err := l.ReplayFailed(ctx, m.ID, r)
		if err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, replayFailedView{Replayed: res.Replayed, More: res.More})
	}
}

// parseReplayTime reads an RFC 3339 time (2026-11-25T07:00:00Z, or with an
// offset), from 1970 to 9999.
func parseReplayTime(name, s string) (time.Time, error) {
	bad := postings.FieldErrorf(name, "must be an RFC 3339 time such as 2026-11-25T07:00:00Z, from year %d to %d",
		replayTimeYearMin, replayTimeYearMax)
	if len(s) > 40 {
		return time.Time{}, bad
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, bad
	}
	t = t.UTC()
	if t.Year() < replayTimeYearMin || t.Year() > replayTimeYearMax {
		return time.Time{}, bad
	}
	return t, nil
}

// parseIntField reads an integer given as a JSON number (or a string of
// digits) in [lo, hi]: digits only, no sign, exponent or fraction.
func parseIntField(name string, v amountText, lo, hi int) (int, error) {
	bad := postings.FieldErrorf(name, "must be an integer from %d to %d", lo, hi)
	s := string(v)
	if s == "" || len(s) > 9 {
		return 0, bad
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, bad
		}
		n = n*10 + int(s[i]-'0')
	}
	if n < lo || n > hi {
		return 0, bad
	}
	return n, nil
}
