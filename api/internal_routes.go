package api

import (
	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/internal/httpserve"
)

// addInternalRoutes is the whole internal API surface. Every request passes
// the middleware of /shop in the same order (request id and logger, access
// log, panic recovery, time-out, body deadlines, header and body bounds);
// every route but /healthz
// then checks the bearer token. There is no Idempotency-Key: each message
// is idempotent on its messageId, in the ledger.
func addInternalRoutes(r *gin.Engine, d InternalDeps) {
	m := d.Metrics.Internal()
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

	r.GET("/healthz", httpserve.InternalHealthz(d.Workers))
	// The process's metrics, for the monitoring network: behind their own
	// token when MetricsToken is set, never the partners' token
	// (docs/operations.md, "Metrics").
	if d.MetricsToken != "" {
		r.GET("/metrics", requireToken(d.MetricsToken), gin.WrapH(d.Metrics.Handler()))
	} else {
		r.GET("/metrics", gin.WrapH(d.Metrics.Handler()))
	}

	auth := requireToken(d.Token)
	network := r.Group("/network", auth)
	network.POST("/authorize", handleNetworkAuthorize(d.Network))
	network.POST("/clear", handleNetworkClear(d.Network))
	network.POST("/reverse", handleNetworkReverse(d.Network))
	network.POST("/refund", handleNetworkRefund(d.Network))
	network.GET("/authorizations", handleNetworkAttempts(d.Network))
	network.GET("/authorizations/:authId", handleNetworkAuthorization(d.Network))

	rail := r.Group("/rail", auth)
	rail.POST("/report", handleRailReport(d.Rails))
}
