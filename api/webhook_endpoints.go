package api

import (
	"context"
	"encoding/json"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/api/views"
	"github.com/paygate/gateway/internal/callbackurl"
	"github.com/paygate/gateway/internal/delivery"
)

// The merchant's webhook endpoints (docs/api.md, "Webhook endpoints";
// docs/callbacks.md, "Webhook endpoints"): up to 16, each with a URL
// (checked with the callback-URL rules, a 400 naming url), the event types
// it receives (all when none), its own whsec_ secret (in the creation's
// answer only; rolled like the merchant's) and an enabled flag. Endpoint
// one is the merchant's default URL: changing its url is PUT /shop/webhook.
// Endpoint one is disabled and selects types like any other.
// Another merchant's endpoint is answered exactly like an unknown one
// (1302).

// WebhookEndpoints are the endpoints' store (*delivery.Store). Errors:
// ENOTFOUND webhook_endpoint, ELIMIT webhook_endpoints_max, EINVALID
// naming the field.
type WebhookEndpoints interface {
	Endpoints(ctx context.Context, merchant int64) ([]delivery.Endpoint, error)
	Endpoint(ctx context.Context, merchant int64, id string) (*delivery.Endpoint, error)
	CreateEndpoint(ctx context.Context, merchant int64, sp delivery.EndpointSpec) (*delivery.CreatedEndpoint, error)
	UpdateEndpoint(ctx context.Context, merchant int64, id string, sp delivery.EndpointSpec) (*delivery.Endpoint, error)
	DeleteEndpoint(ctx context.Context, merchant int64, id string) error
	RollEndpointSecret(ctx context.Context, merchant int64, id string, overlap time.Duration) (*delivery.SecretRoll, error)
}

// decodeEndpointSpec reads {url, eventTypes, enabled, description}; a
// member absent (or null) is left nil, eventTypes [] selects every type.
func decodeEndpointSpec(c *gin.Context, allow callbackurl.AllowList) (delivery.EndpointSpec, error) {
	var sp delivery.EndpointSpec
	var url, desc string
	var types []string
	var enabled bool
	raw := bodyOf(c)
	if err := decodeObject(raw, []field{{name: "url", into: &url},
		{name: "eventTypes", into: &types, itemsMax: len(delivery.EventTypes)},
		{name: "enabled", into: &enabled}, {name: "description", into: &desc}}); err != nil {
		return sp, err
	}
	var given map[string]json.RawMessage // which members were given, not null
	if err := json.Unmarshal(raw, &given); err != nil {
		return sp, err
	}
	has := func(name string) bool { v, ok := given[name]; return ok && string(v) != "null" }
	if has("url") {
		if url != "" {
			if err := checkCallbackURL("url", url, allow); err != nil {
				return sp, err
			}
		}
		sp.URL = &url
	}
	if has("eventTypes") {
		if err := delivery.CheckEventTypes("eventTypes", types); err != nil {
			return sp, err
		}
		if types == nil {
			types = []string{} // [], every type
		}
		sp.EventTypes = &types
	}
	if has("enabled") {
		sp.Enabled = &enabled
	}
	if has("description") {
		sp.Description = &desc
	}
	return sp, nil
}

// endpointParam reads the path's endpoint id (400 naming endpointId).
func endpointParam(c *gin.Context) (string, error) {
	id := c.Param("endpointId")
	return id, delivery.CheckEndpointID("endpointId", id)
}

// handleEndpointList answers GET /shop/webhook/endpoints.
func handleEndpointList(l Webhooks) gin.HandlerFunc {
	return func(c *gin.Context) {
		list, err := l.Endpoints(c.Request.Context(), merchantOf(c).ID)
		writeResult(c, views.NewEndpointList, list, err)
	}
}

// handleEndpointGet answers GET /shop/webhook/endpoints/{endpointId}.
func handleEndpointGet(l Webhooks) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, err := endpointParam(c)
		if err != nil {
			writeError(c, err)
			return
		}
		e, err := l.Endpoint(c.Request.Context(), merchantOf(c).ID, id)
		writeResult(c, views.NewEndpoint, e, err)
	}
}
