package client

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"time"
)

// Events as a resource and the Standard Webhooks secret (docs/api.md,
// "Webhooks"; docs/callbacks.md, "Standard Webhooks").

// The orders of WebhookEventsQuery.Order.
const (
	OrderAsc  = "asc"  // oldest first: the gateway's default
	OrderDesc = "desc" // newest first
)

// WebhookEventDetail is one event with the body it carries and its
// deliveries (none when it was not sent) with their attempts.
type WebhookEventDetail struct {
	WebhookEvent
	Data json.RawMessage `json:"data"` // the callback's body, as every attempt sends it
	// Deliveries, with their attempts, take the place of the listing's
	// WebhookEvent.Deliveries (left empty here).
	Deliveries []WebhookDelivery `json:"deliveries"`
}

// WebhookDelivery is one delivery of an event with its attempts.
type WebhookDelivery struct {
	WebhookDeliverySummary
	AttemptList []WebhookAttempt `json:"attemptList"` // oldest first
}

// WebhookDeliverySummary is one delivery of an event to one endpoint, as
// the listing shows it.
type WebhookDeliverySummary struct {
	// EndpointID is the webhook endpoint the delivery went to.
	EndpointID     string     `json:"endpointId,omitempty"`
	URL            string     `json:"url"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	NextAttemptAt  *time.Time `json:"nextAttemptAt"`
	LastAttemptAt  *time.Time `json:"lastAttemptAt"`
	LastHTTPStatus *int       `json:"lastHttpStatus"`
	LastError      *string    `json:"lastError"`
	DeliveredAt    *time.Time `json:"deliveredAt"`
}

// WebhookAttempt is one attempt at a delivery.
type WebhookAttempt struct {
	WindowStart   time.Time  `json:"windowStart"` // a replay starts a new window, numbered from 1
	Attempt       int        `json:"attempt"`
	At            time.Time  `json:"at"`
	DurationMs    int        `json:"durationMs"`
	HTTPStatus    *int       `json:"httpStatus"` // nil when no answer came
	Error         *string    `json:"error"`
	Outcome       string     `json:"outcome"` // DELIVERED, PENDING or FAILED
	NextAttemptAt *time.Time `json:"nextAttemptAt"`
}

// WebhookSecret is a new Standard Webhooks secret (whsec_…), shown once.
type WebhookSecret struct {
	Secret   string    `json:"secret"`
	RolledAt time.Time `json:"rolledAt"`
	// PreviousValidUntil is when the replaced secret stops signing; nil
	// when it stopped at once (or there was none).
	PreviousValidUntil *time.Time `json:"previousValidUntil"`
}

// WebhookEvent is GET /shop/webhook/events/{eventId}. CodeEventNotFound
// (1301) for an unknown id and for another merchant's alike.
func (c *Client) WebhookEvent(ctx context.Context, eventID string, opts ...CallOption) (*WebhookEventDetail, error) {
	var out WebhookEventDetail
	op := opGetWebhookEvent
	op.path = strings.Replace(op.path, "{eventId}", url.PathEscape(eventID), 1)
	if err := c.call(ctx, op, nil, nil, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// RollWebhookSecret is POST /shop/webhook/secret/roll: store the answer's
// secret before anything else; the replaced one keeps signing for
// r.OverlapHours.
func (c *Client) RollWebhookSecret(ctx context.Context, r KeyRollRequest, opts ...CallOption) (*WebhookSecret, error) {
	var out WebhookSecret
	if err := c.call(ctx, opRollWebhookSecret, nil, r, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}
