package views

import (
	"encoding/json"

	"github.com/paygate/gateway/internal/delivery"
)

// The webhooks' answers (docs/api.md, "Webhooks", "Webhook endpoints").

// Webhook is the answer of GET and PUT /shop/webhook.
type Webhook struct {
	// CallbackURL is the default target of the merchant's callbacks; null
	// when it has none (events are then kept, listed NOT_SENT, not sent).
	CallbackURL *string `json:"callbackUrl"`
}

// NewWebhook is the answer for the default callback URL url ("" for none).
func NewWebhook(url string) Webhook { return Webhook{CallbackURL: stringOrNil(url)} }

// Event is one event with its delivery.
type Event struct {
	EventID   string  `json:"eventId"`
	EventType string  `json:"eventType"`
	Sequence  int64   `json:"sequence"`
	CreatedAt string  `json:"createdAt"`
	Status    string  `json:"status"` // PENDING, DELIVERED, FAILED, NOT_SENT
	URL       *string `json:"url"`
	DeliveryState
	// Deliveries are the event's deliveries by endpoint, endpoint one
	// first, without their attempts (EventDetail's have them); Status is
	// the worst over the enabled endpoints' (docs/api.md, "Webhooks"), the
	// fields above are endpoint one's.
	Deliveries []EventDeliverySummary `json:"deliveries"`
}

// NewEvent is d as the listing and a replay answer it.
func NewEvent(d *delivery.DeliveryInfo) Event {
	v := Event{EventID: d.EventID, EventType: d.EventType, Sequence: d.EventSeq, CreatedAt: Timestamp(d.CreatedAt),
		Status: d.Status, URL: stringOrNil(d.URL),
		DeliveryState: newDeliveryState(d.Progress),
		Deliveries:    make([]EventDeliverySummary, len(d.Deliveries))}
	for i := range d.Deliveries {
		v.Deliveries[i] = newDeliverySummary(&d.Deliveries[i])
	}
	return v
}

// EventList is the answer of GET /shop/webhook/events.
type EventList struct {
	Total int64   `json:"total"`
	List  []Event `json:"list"`
}

// NewEventList is a page of the events.
func NewEventList(p *delivery.EventPage) EventList {
	v := EventList{Total: p.Total, List: make([]Event, len(p.List))}
	for i := range p.List {
		v.List[i] = NewEvent(&p.List[i])
	}
	return v
}

// EventDetail is GET /shop/webhook/events/{eventId}: the event as listed,
// the body it carries (data: the JSON object every attempt sends), and its
// deliveries with their attempts.
type EventDetail struct {
	Event
	Data json.RawMessage `json:"data"`
	// Deliveries, with their attempts, replace the listing's (the
	// shallower field wins in encoding/json).
	Deliveries []EventDelivery `json:"deliveries"`
}

// EventDelivery is one delivery of an event: its target, state and attempts
// (oldest first; a replay starts a new window numbered from 1). One per
// webhook endpoint the event went to (endpoint one, the default URL,
// first), none when it was not sent.
type EventDelivery struct {
	EventDeliverySummary
	AttemptList []EventAttempt `json:"attemptList"`
}

// EventDeliverySummary is one delivery of an event as the listing shows
// it: its endpoint, target and state, without the attempts.
type EventDeliverySummary struct {
	EndpointID string `json:"endpointId,omitempty"`
	URL        string `json:"url"`
	Status     string `json:"status"`
	DeliveryState
}

// DeliveryState is a delivery's attempts so far and their outcome: the
// same fields, in the same order, on an event (its endpoint one's) and on
// each of its deliveries.
type DeliveryState struct {
	Attempts       int     `json:"attempts"`
	NextAttemptAt  *string `json:"nextAttemptAt"`
	LastAttemptAt  *string `json:"lastAttemptAt"`
	LastHTTPStatus *int    `json:"lastHttpStatus"`
	LastError      *string `json:"lastError"`
	DeliveredAt    *string `json:"deliveredAt"`
}

func newDeliveryState(p delivery.Progress) DeliveryState {
	return DeliveryState{Attempts: p.Attempts, NextAttemptAt: TimestampOrNil(p.NextAttemptAt), LastAttemptAt: TimestampOrNil(p.LastAttemptAt),
		LastHTTPStatus: p.LastStatus, LastError: p.LastError, DeliveredAt: TimestampOrNil(p.DeliveredAt)}
}

// newDeliverySummary is an event's delivery to one endpoint, as listed.
func newDeliverySummary(ed *delivery.EndpointDelivery) EventDeliverySummary {
	return EventDeliverySummary{EndpointID: ed.EndpointID, URL: ed.URL, Status: ed.Status,
		DeliveryState: newDeliveryState(ed.Progress)}
}

// EventAttempt is one attempt of a delivery.
type EventAttempt struct {
	WindowStart   string  `json:"windowStart"`
	Attempt       int     `json:"attempt"`
	At            string  `json:"at"`
	DurationMs    int     `json:"durationMs"`
	HTTPStatus    *int    `json:"httpStatus"`
	Error         *string `json:"error"`
	Outcome       string  `json:"outcome"`
	NextAttemptAt *string `json:"nextAttemptAt"`
}

func newAttempts(as []delivery.Attempt) []EventAttempt {
	out := make([]EventAttempt, len(as))
	for i, a := range as {
		out[i] = EventAttempt{WindowStart: Timestamp(a.WindowStart), Attempt: a.Attempt, At: Timestamp(a.At),
			DurationMs: a.DurationMs, HTTPStatus: a.HTTPStatus, Error: a.Error, Outcome: a.Outcome,
			NextAttemptAt: TimestampOrNil(a.NextAttemptAt)}
	}
	return out
}

// NewEventDetail is d as GET /shop/webhook/events/{eventId} answers it: one
// delivery per endpoint, or the default URL's alone when the event predates
// the endpoints, or none when it was not sent.
func NewEventDetail(d *delivery.EventDetail) EventDetail {
	ev := NewEvent(&d.DeliveryInfo)
	v := EventDetail{Event: ev, Data: d.Payload, Deliveries: []EventDelivery{}}
	if d.Status == delivery.DeliveryNotSent && len(d.Endpoints) == 0 {
		return v
	}
	if len(d.Endpoints) == 0 {
		v.Deliveries = append(v.Deliveries, EventDelivery{EventDeliverySummary: EventDeliverySummary{URL: d.URL, Status: ev.Status,
			DeliveryState: ev.DeliveryState}, AttemptList: newAttempts(d.Attempts)})
		return v
	}
	for i := range d.Endpoints {
		v.Deliveries = append(v.Deliveries, newEndpointDelivery(&d.Endpoints[i]))
	}
	return v
}

// newEndpointDelivery is an event's delivery to one endpoint.
func newEndpointDelivery(ed *delivery.EndpointDelivery) EventDelivery {
	return EventDelivery{EventDeliverySummary: newDeliverySummary(ed), AttemptList: newAttempts(ed.AttemptList)}
}

// ReplayFailed is the answer of POST /shop/webhook/events/replay-failed.
type ReplayFailed struct {
	Replayed int64 `json:"replayed"`
	More     bool  `json:"more"`
}

// NewReplayFailed is the answer of a replay of the failed events.
func NewReplayFailed(r delivery.ReplayResult) ReplayFailed {
	return ReplayFailed{Replayed: r.Replayed, More: r.More}
}

// Endpoint is one webhook endpoint as the API shows it.
type Endpoint struct {
	ID          string   `json:"id"`
	URL         *string  `json:"url"` // null: endpoint one without a default URL
	EventTypes  []string `json:"eventTypes"`
	AllEvents   bool     `json:"allEvents"`
	Enabled     bool     `json:"enabled"`
	Default     bool     `json:"default"` // endpoint one, the merchant's default URL
	Description string   `json:"description"`
	CreatedAt   string   `json:"createdAt"`
	// PreviousSecretValidUntil is the end of a secret roll's overlap.
	PreviousSecretValidUntil *string `json:"previousSecretValidUntil"`
	// Secret is shown in the creation's answer only.
	Secret string `json:"secret,omitempty"`
}

// NewEndpoint is e as the API shows it, without its secret.
func NewEndpoint(e *delivery.Endpoint) Endpoint {
	v := Endpoint{ID: e.ID, URL: stringOrNil(e.URL), EventTypes: e.EventTypes, AllEvents: e.EventTypes == nil,
		Enabled: e.Enabled, Default: e.Default(), Description: e.Description, CreatedAt: Timestamp(e.CreatedAt),
		PreviousSecretValidUntil: TimestampOrNil(e.PreviousSecretValidUntil)}
	if v.EventTypes == nil {
		v.EventTypes = []string{}
	}
	return v
}

// EndpointList is the answer of GET /shop/webhook/endpoints.
type EndpointList struct {
	List []Endpoint `json:"list"`
}

// NewEndpointList is the merchant's endpoints.
func NewEndpointList(list []delivery.Endpoint) EndpointList {
	v := EndpointList{List: make([]Endpoint, len(list))}
	for i := range list {
		v.List[i] = NewEndpoint(&list[i])
	}
	return v
}
