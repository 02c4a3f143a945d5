package api

import "github.com/gin-gonic/gin"

// addRoutes is the whole API surface in one place, with the middleware of
// each route. Every request passes, in order: the request id (and its
// logger), the access log and metrics, panic recovery, the request
// time-out, the deadlines of the body's reads, the header bound (431) and
// the body bound (413). Every /shop request is authenticated, then
// charged to its merchant's rate limit (429 past it); every /shop POST then
// reads its body and holds its Idempotency-Key.
func addRoutes(r *gin.Engine, d Deps) {
	m := d.Metrics.public
	inflight := newInFlight()
	r.Use(
		withRequestID(d.Log),
		accessLog(d.Now, m),
		recoverPanic(),
		withTimeout(d.RequestTimeout),
		guardBody(d.Limits.BodyIdleTimeout),
		limitHeaders(d.Limits.HeaderBytesMax),
		limitBody(d.BodyBytesMax),
	)
	r.NoRoute(handleNoRoute())
	r.NoMethod(handleNoMethod())

	r.GET("/healthz", handleHealthz())
	r.GET("/readyz", handleReadyz(d.DB))
	r.GET("/metrics", handleMetrics(d.Metrics, inflight))

	l := d.Ledger
	shop := r.Group("/shop", authenticate(l, d.TrustedProxies, d.Now), limitRate(newRateLimiter(d.RateLimit, d.Now)))
	post := readRequest(inflight)
	shop.GET("/account", handleAccount(l))
	shop.GET("/card/bin/list", handleBINList(l))
	shop.POST("/card/create", post, handleCardCreate(l, d.CallbackAllow))
	shop.GET("/card/info", handleCardInfo(l))
	shop.GET("/card/balance", handleCardBalance(l))
	shop.POST("/card/balance/batch", post, handleCardBalanceBatch(l))
	shop.POST("/card/freeze", post, handleCardAction(true, freezeCard(l)))
	shop.POST("/card/unfreeze", post, handleCardAction(false, unfreezeCard(l)))
	shop.POST("/card/cancel", post, handleCardAction(false, cancelCard(l)))
	shop.POST("/card/transfer", post, handleCardTransfer(l))
	shop.GET("/bill/list", handleBillList(l))
	shop.GET("/remittance/dynamic-fields", handleRemittanceDynamicFields())
	shop.POST("/remittance/create", post, handleRemittanceCreate(l, d.CallbackAllow))
	shop.GET("/remittance/query", handleRemittanceQuery(l))
}
