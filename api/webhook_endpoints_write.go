package api

import (
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/api/views"
	"github.com/paygate/gateway/internal/callbackurl"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/postings"
)

// The writes of the webhook endpoints (webhook_endpoints.go). Each claims
// its Idempotency-Key like the other settings (another request with it is
// 1008). No answer is stored for a replay — a creation's holds the
// endpoint's secret — so a retried creation makes a second endpoint: list
// the endpoints before retrying one whose answer was lost.

// handleEndpointCreate answers POST /shop/webhook/endpoints {"url",
// "eventTypes", "enabled", "description"}: the new endpoint with its
// secret, shown this once. The 17th is 1007 (limit exceeded).
func handleEndpointCreate(l Webhooks, keys ReadKeys, allow callbackurl.AllowList) gin.HandlerFunc {
	return func(c *gin.Context) {
		sp, err := decodeEndpointSpec(c, allow)
		if err == nil && (sp.URL == nil || *sp.URL == "") {
			err = postings.FieldErrorf("url", "is required")
		}
		if err != nil {
			writeError(c, err)
			return
		}
		ctx, m := c.Request.Context(), merchantOf(c)
		if !claimKey(c, keys) {
			return
		}
		e, err := l.CreateEndpoint(ctx, m.ID, sp)
		if err != nil {
			writeError(c, err)
			return
		}
		v := views.NewEndpoint(&e.Endpoint)
		v.Secret = e.Secret
		c.Header("Cache-Control", "no-store") // the answer holds a secret
		writeOK(c, v)
	}
}

// handleEndpointUpdate answers POST /shop/webhook/endpoints/{endpointId}
// with the members to change. Endpoint one's url is the merchant's default
// URL (as PUT /shop/webhook; "" clears it); its types, enabled flag and
// description change in the store like any endpoint's.
func handleEndpointUpdate(l Webhooks, settings WebhookSettings, keys ReadKeys, allow callbackurl.AllowList) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, err := endpointParam(c)
		sp := delivery.EndpointSpec{}
		if err == nil {
			sp, err = decodeEndpointSpec(c, allow)
		}
		if err != nil {
			writeError(c, err)
			return
		}
		ctx, m := c.Request.Context(), merchantOf(c)
		if !claimKey(c, keys) {
			return
		}
		cur, err := l.Endpoint(ctx, m.ID, id)
		if err != nil {
			writeError(c, err)
			return
		}
		url := sp.URL
		if cur.Default() {
			sp.URL = nil // the store keeps endpoint one's description and checks the rest
		}
		e, err := l.UpdateEndpoint(ctx, m.ID, id, sp)
		if err != nil {
			writeError(c, err)
			return
		}
		if cur.Default() && url != nil {
			if err := settings.SetCallbackURL(ctx, m.ID, *url); err != nil {
				writeError(c, err)
				return
			}
			e.URL = *url
		}
		writeOK(c, views.NewEndpoint(e))
	}
}

// handleEndpointDelete answers DELETE /shop/webhook/endpoints/{endpointId}:
// endpoint one cannot be deleted (400 naming endpointId: disable it).
func handleEndpointDelete(l Webhooks) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, err := endpointParam(c)
		if err != nil {
			writeError(c, err)
			return
		}
		if err := l.DeleteEndpoint(c.Request.Context(), merchantOf(c).ID, id); err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, struct {
			ID      string `json:"id"`
			Deleted bool   `json:"deleted"`
		}{id, true})
	}
}

// handleEndpointSecretRoll answers POST
// /shop/webhook/endpoints/{endpointId}/secret/roll {"overlapHours"}, as
// POST /shop/webhook/secret/roll does for endpoint one.
func handleEndpointSecretRoll(l Webhooks, keys ReadKeys) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, err := endpointParam(c)
		var overlap time.Duration
		if err == nil {
			overlap, err = decodeOverlap(c)
		}
		if err != nil {
			writeError(c, err)
			return
		}
		ctx, m := c.Request.Context(), merchantOf(c)
		if !claimKey(c, keys) {
			return
		}
		r, err := l.RollEndpointSecret(ctx, m.ID, id, overlap)
		if err != nil {
			writeError(c, err)
			return
		}
		c.Header("Cache-Control", "no-store")
		writeOK(c, views.NewWebhookSecret(r))
	}
}

// claimKey claims the request's Idempotency-Key as the other settings do;
// false when it answered the refusal.
func claimKey(c *gin.Context, keys ReadKeys) bool {
	if err := keys.ClaimReadIdempotency(c.Request.Context(), merchantOf(c).ID, idempotencyOf(c)); err != nil {
		writeError(c, err)
		return false
	}
	return true
}
