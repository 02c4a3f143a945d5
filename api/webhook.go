package api

import (
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/api/views"
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

// handleWebhookGet answers GET /shop/webhook.
func handleWebhookGet() gin.HandlerFunc {
	return func(c *gin.Context) {
		writeOK(c, views.NewWebhook(merchantOf(c).CallbackURL))
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
		writeOK(c, views.NewWebhook(url))
	}
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
		writeResult(c, views.NewEventList, p, err)
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
		writeResult(c, views.NewEventDetail, d, err)
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
		writeResult(c, views.NewEvent, d, err)
	}
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
		writeResult(c, views.NewReplayFailed, res, err)
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
