package client

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Webhooks and keys (docs/api.md, "Webhooks" and "Keys").

// Webhook is the merchant's default callback URL; nil when none is set.
type Webhook struct {
	CallbackURL *string `json:"callbackUrl"`
}

// webhookRequest is the body of SetWebhook.
type webhookRequest struct {
	CallbackURL *string `json:"callbackUrl"`
}

// Delivery statuses of a WebhookEvent.
const (
	DeliveryPending   = "PENDING"
	DeliveryDelivered = "DELIVERED"
	DeliveryFailed    = "FAILED"
	DeliveryNotSent   = "NOT_SENT"
)

// WebhookEvent is an event with the state of its deliveries. Status is the
// worst (FAILED, then PENDING, then DELIVERED) over its deliveries to the
// endpoints enabled now, else over all of them, NOT_SENT when it has none;
// URL, Attempts and the other delivery fields are endpoint one's (the
// default URL's); Deliveries has one per endpoint.
type WebhookEvent struct {
	EventID        string     `json:"eventId"` // the callback's event_id
	EventType      string     `json:"eventType"`
	Sequence       int64      `json:"sequence"`
	CreatedAt      time.Time  `json:"createdAt"`
	Status         string     `json:"status"` // PENDING, DELIVERED, FAILED, NOT_SENT
	URL            *string    `json:"url"`
	Attempts       int        `json:"attempts"`
	NextAttemptAt  *time.Time `json:"nextAttemptAt"`
	LastAttemptAt  *time.Time `json:"lastAttemptAt"`
	LastHTTPStatus *int       `json:"lastHttpStatus"`
	LastError      *string    `json:"lastError"`
	DeliveredAt    *time.Time `json:"deliveredAt"`
	// Deliveries are its deliveries by endpoint, endpoint one first,
	// without their attempts (WebhookEvent(ctx, id) has those).
	Deliveries []WebhookDeliverySummary `json:"deliveries"`
}

// WebhookEventsQuery selects events: a delivery status ("" any), types
// (none: any), a page from 1 of Size events (1 to 500); zero Page and Size
// are the gateway's defaults (1 and 50). Order is OrderAsc (the default)
// or OrderDesc; StartingAfter, an event id, lists the events after it in
// that order instead of a page (leave Page zero).
type WebhookEventsQuery struct {
	Status        string   `query:"status"`
	Types         []string `query:"type"`
	Page          int      `query:"page"`
	Size          int      `query:"size"`
	Order         string   `query:"order"`
	StartingAfter string   `query:"startingAfter"`
}

func (q WebhookEventsQuery) values() url.Values {
	v := url.Values{}
	if q.Status != "" {
		v.Set("status", q.Status)
	}
	if len(q.Types) > 0 {
		v.Set("type", strings.Join(q.Types, ","))
	}
	if q.Page > 0 {
		v.Set("page", strconv.Itoa(q.Page))
	}
	if q.Size > 0 {
		v.Set("size", strconv.Itoa(q.Size))
	}
	if q.Order != "" {
		v.Set("order", q.Order)
	}
	if q.StartingAfter != "" {
		v.Set("startingAfter", q.StartingAfter)
	}
	return v
}

// WebhookEventPage is a page of events, oldest first.
type WebhookEventPage struct {
	Total int64          `json:"total"`
	List  []WebhookEvent `json:"list"`
}

type replayEventRequest struct {
	EventID string `json:"eventId"`
}

// ReplayFailedRequest replays the failed events created in [From, To), at
// most 31 days, at most Limit (1 to 1000; 0 is the gateway's 1000).
type ReplayFailedRequest struct {
	From  time.Time `json:"from"`
	To    time.Time `json:"to"`
	Limit int       `json:"limit,omitempty"`
}

// ReplayFailedResult is what a replay of failed events did; More: call
// again.
type ReplayFailedResult struct {
	Replayed int64 `json:"replayed"`
	More     bool  `json:"more"`
}

// Webhook is GET /shop/webhook.
func (c *Client) Webhook(ctx context.Context, opts ...CallOption) (*Webhook, error) {
	var out Webhook
	if err := c.call(ctx, opGetWebhook, nil, nil, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetWebhook is PUT /shop/webhook: "" clears the URL.
func (c *Client) SetWebhook(ctx context.Context, callbackURL string, opts ...CallOption) (*Webhook, error) {
	var out Webhook
	req := webhookRequest{}
	if callbackURL != "" {
		req.CallbackURL = &callbackURL
	}
	if err := c.call(ctx, opSetWebhook, nil, req, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// WebhookEvents is GET /shop/webhook/events.
func (c *Client) WebhookEvents(ctx context.Context, q WebhookEventsQuery, opts ...CallOption) (*WebhookEventPage, error) {
	var out WebhookEventPage
	if err := c.call(ctx, opListWebhookEvents, q.values(), nil, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// ReplayWebhookEvent is POST /shop/webhook/events/replay: the event is sent
// again with the same event_id. CodeEventNotFound for an unknown id.
func (c *Client) ReplayWebhookEvent(ctx context.Context, eventID string, opts ...CallOption) (*WebhookEvent, error) {
	var out WebhookEvent
	if err := c.call(ctx, opReplayWebhookEvent, nil, replayEventRequest{EventID: eventID}, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// ReplayFailedWebhookEvents is POST /shop/webhook/events/replay-failed.
func (c *Client) ReplayFailedWebhookEvents(ctx context.Context, r ReplayFailedRequest, opts ...CallOption) (*ReplayFailedResult, error) {
	var out ReplayFailedResult
	r.From, r.To = r.From.UTC(), r.To.UTC()
	if err := c.call(ctx, opReplayFailedWebhookEvents, nil, r, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}
