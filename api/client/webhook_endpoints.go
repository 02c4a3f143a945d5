package client

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The merchant's webhook endpoints (docs/api.md, "Webhook endpoints"): up
// to 16, each with a URL, the event types it receives (all when none), its
// own whsec_ secret and an enabled flag. Endpoint one (Default) is the
// merchant's default URL.

// CodeWebhookEndpointNotFound is an unknown, deleted or another merchant's
// endpoint (they are one answer).
const CodeWebhookEndpointNotFound Code = 1302

var (
	opListWebhookEndpoints    = operation{"listWebhookEndpoints", http.MethodGet, "/shop/webhook/endpoints"}
	opCreateWebhookEndpoint   = operation{"createWebhookEndpoint", http.MethodPost, "/shop/webhook/endpoints"}
	opGetWebhookEndpoint      = operation{"getWebhookEndpoint", http.MethodGet, "/shop/webhook/endpoints/{endpointId}"}
	opUpdateWebhookEndpoint   = operation{"updateWebhookEndpoint", http.MethodPost, "/shop/webhook/endpoints/{endpointId}"}
	opDeleteWebhookEndpoint   = operation{"deleteWebhookEndpoint", http.MethodDelete, "/shop/webhook/endpoints/{endpointId}"}
	opRollWebhookEndpointSecr = operation{"rollWebhookEndpointSecret", http.MethodPost, "/shop/webhook/endpoints/{endpointId}/secret/roll"}
	endpointOperations        = []operation{opListWebhookEndpoints, opCreateWebhookEndpoint, opGetWebhookEndpoint,
		opUpdateWebhookEndpoint, opDeleteWebhookEndpoint, opRollWebhookEndpointSecr}
)

// WebhookEndpoint is one of the merchant's endpoints.
type WebhookEndpoint struct {
	ID string `json:"id"`
	// URL is nil for endpoint one while the merchant has no default URL.
	URL        *string  `json:"url"`
	EventTypes []string `json:"eventTypes"` // empty when AllEvents
	AllEvents  bool     `json:"allEvents"`
	Enabled    bool     `json:"enabled"`
	// Default is endpoint one, the merchant's default URL.
	Default                  bool       `json:"default"`
	Description              string     `json:"description"`
	CreatedAt                time.Time  `json:"createdAt"`
	PreviousSecretValidUntil *time.Time `json:"previousSecretValidUntil"`
	// Secret is in CreateWebhookEndpoint's answer only: store it.
	Secret string `json:"secret,omitempty"`
}

// WebhookEndpointRequest creates or changes an endpoint: a nil member is
// left as it is (at creation: URL required, every type, enabled). A
// pointer to an empty EventTypes selects every type.
type WebhookEndpointRequest struct {
	URL         *string   `json:"url,omitempty"`
	EventTypes  *[]string `json:"eventTypes,omitempty"`
	Enabled     *bool     `json:"enabled,omitempty"`
	Description *string   `json:"description,omitempty"`
}

type webhookEndpointList struct {
	List []WebhookEndpoint `json:"list"`
}

// WebhookEndpointDeleted is DeleteWebhookEndpoint's answer.
type WebhookEndpointDeleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

func endpointOp(op operation, id string) operation {
	op.path = strings.Replace(op.path, "{endpointId}", url.PathEscape(id), 1)
	return op
}

// WebhookEndpoints is GET /shop/webhook/endpoints, endpoint one first.
func (c *Client) WebhookEndpoints(ctx context.Context, opts ...CallOption) ([]WebhookEndpoint, error) {
	var out webhookEndpointList
	if err := c.call(ctx, opListWebhookEndpoints, nil, nil, &out, opts); err != nil {
		return nil, err
	}
	return out.List, nil
}

// WebhookEndpoint is GET /shop/webhook/endpoints/{endpointId}.
func (c *Client) WebhookEndpoint(ctx context.Context, id string, opts ...CallOption) (*WebhookEndpoint, error) {
	var out WebhookEndpoint
	if err := c.call(ctx, endpointOp(opGetWebhookEndpoint, id), nil, nil, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateWebhookEndpoint is POST /shop/webhook/endpoints: the answer holds
// the endpoint's secret, shown this once. It is never retried (the gateway
// stores no answer to replay: a retry would make a second endpoint); after
// a lost answer, list the endpoints. CodeLimitExceeded for the 17th.
func (c *Client) CreateWebhookEndpoint(ctx context.Context, r WebhookEndpointRequest, opts ...CallOption) (*WebhookEndpoint, error) {
	var out WebhookEndpoint
	if err := c.call(ctx, opCreateWebhookEndpoint, nil, r, &out, append(opts, WithoutIdempotencyKey())); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateWebhookEndpoint is POST /shop/webhook/endpoints/{endpointId}.
func (c *Client) UpdateWebhookEndpoint(ctx context.Context, id string, r WebhookEndpointRequest, opts ...CallOption) (*WebhookEndpoint, error) {
	var out WebhookEndpoint
	if err := c.call(ctx, endpointOp(opUpdateWebhookEndpoint, id), nil, r, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteWebhookEndpoint is DELETE /shop/webhook/endpoints/{endpointId}
// (endpoint one cannot be deleted: disable it with UpdateWebhookEndpoint).
func (c *Client) DeleteWebhookEndpoint(ctx context.Context, id string, opts ...CallOption) (*WebhookEndpointDeleted, error) {
	var out WebhookEndpointDeleted
	if err := c.call(ctx, endpointOp(opDeleteWebhookEndpoint, id), nil, nil, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// RollWebhookEndpointSecret is POST
// /shop/webhook/endpoints/{endpointId}/secret/roll: store the answer's
// secret; the replaced one keeps signing for r.OverlapHours.
func (c *Client) RollWebhookEndpointSecret(ctx context.Context, id string, r KeyRollRequest, opts ...CallOption) (*WebhookSecret, error) {
	var out WebhookSecret
	if err := c.call(ctx, endpointOp(opRollWebhookEndpointSecr, id), nil, r, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}
