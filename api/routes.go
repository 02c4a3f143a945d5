package api

import (
	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/internal/httpserve"
	"github.com/paygate/gateway/internal/merchant"
)

// addRoutes is the whole API surface in one place, with the middleware of
// each route. Every request passes, in order: the request id (and its
// logger), the access log and metrics, panic recovery, the API version of
// /shop requests (400 for an unknown one, so that every later answer
// says its version; api/versions.go), the request time-out, the deadlines
// of the body's reads, the header bound (431) and the body bound (413).
// Every /shop request is authenticated, then charged to its merchant's rate
// limit (429 past it); every /shop POST then reads its body and holds its
// Idempotency-Key.
func addRoutes(r *gin.Engine, d Deps) {
	inflight := newInFlight()
	r.Use(door(d.surface(), withAPIVersion(d.versions))...)
	r.NoRoute(handleNoRoute())
	r.NoMethod(hideSandbox(d.Merchants), handleNoMethod())

	r.GET("/healthz", httpserve.Healthz())
	r.GET("/readyz", httpserve.Readyz(d.DB, d.Ready))
	// /metrics is on the internal listener (docs/operations.md, "Metrics");
	// here it is a 404 like any unknown path. The keys in flight of this
	// listener are what the registry reports.
	d.Metrics.CountInFlight(inflight.len)

	rate := limitRate(httpserve.NewRateLimiter(d.RateLimit, d.Now))
	shop := r.Group("/shop", authenticate(d.Merchants, d.TrustedProxies, d.Now), rate)
	post := readRequest(inflight)
	shop.GET("/account", handleAccount(d.Accounts))
	shop.GET("/card/bin/list", handleBINList(d.Accounts))
	shop.POST("/card/create", post, handleCardCreate(d.Cards, d.CallbackAllow))
	shop.GET("/card/info", handleCardInfo(d.Cards))
	shop.GET("/card/balance", handleCardBalance(d.Cards))
	shop.POST("/card/balance/batch", post, handleCardBalanceBatch(d.Cards, d.ReadKeys))
	shop.POST("/card/freeze", post, handleCardAction(true, freezeCard(d.Cards)))
	shop.POST("/card/unfreeze", post, handleCardAction(false, unfreezeCard(d.Cards)))
	shop.POST("/card/cancel", post, handleCardAction(false, cancelCard(d.Cards)))
	shop.POST("/card/transfer", post, handleCardTransfer(d.Cards))
	shop.GET("/bill/list", handleBillList(d.Bills))
	shop.GET("/reports/balance", handleBalanceReport(d.Bills, false))
	shop.GET("/reports/balance/totals", handleBalanceReport(d.Bills, true))
	shop.GET("/card/list", handleCardList(d.Cards))
	shop.GET("/remittance/dynamic-fields", handleRemittanceDynamicFields())
	shop.POST("/remittance/create", post, handleRemittanceCreate(d.Remittances, d.CallbackAllow))
	shop.GET("/remittance/query", handleRemittanceQuery(d.Remittances))
	// Webhooks and keys without the operator (issue 21 points 3 and 4).
	shop.GET("/webhook", handleWebhookGet())
	shop.PUT("/webhook", post, handleWebhookPut(d.WebhookSettings, d.ReadKeys, d.CallbackAllow))
	shop.GET("/webhook/events", handleWebhookEvents(d.Webhooks))
	shop.GET("/webhook/events/:eventId", handleWebhookEvent(d.Webhooks))
	shop.POST("/webhook/secret/roll", post, handleWebhookSecretRoll(d.Webhooks, d.ReadKeys))
	shop.POST("/webhook/events/replay", post, handleWebhookReplay(d.Webhooks, d.ReadKeys))
	shop.POST("/webhook/events/replay-failed", post, handleWebhookReplayFailed(d.Webhooks, d.ReadKeys))
	shop.GET("/webhook/endpoints", handleEndpointList(d.Webhooks))
	shop.POST("/webhook/endpoints", post, handleEndpointCreate(d.Webhooks, d.ReadKeys, d.CallbackAllow))
	shop.GET("/webhook/endpoints/:endpointId", handleEndpointGet(d.Webhooks))
	shop.POST("/webhook/endpoints/:endpointId", post, handleEndpointUpdate(d.Webhooks, d.WebhookSettings, d.ReadKeys, d.CallbackAllow))
	shop.DELETE("/webhook/endpoints/:endpointId", post, handleEndpointDelete(d.Webhooks))
	shop.POST("/webhook/endpoints/:endpointId/secret/roll", post, handleEndpointSecretRoll(d.Webhooks, d.ReadKeys))
	shop.GET("/keys", handleKeys(d.Keys))
	shop.POST("/keys/public/roll", post, handleKeyRoll(d.Keys, merchant.KeyPublic))
	shop.POST("/keys/signing/roll", post, handleKeyRoll(d.Keys, merchant.KeySigning))

	addSandboxRoutes(r, d, rate, post)
	// The internal network API (the card processor's and the rail partners'
	// calls, /network and /rail, on a listener of its own) is api/partner's:
	// its routes are in api/partner/routes.go.
}
