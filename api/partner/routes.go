package partner

import (
	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/internal/httpserve"
)

// addRoutes is the whole internal API surface. Every request passes the
// middleware of /shop in the same order but the API version (request id and
// logger, access log, panic recovery, time-out, body deadlines, header and
// body bounds: api.NewSurface); every route but /healthz and /metrics then
// checks its bearer token. There is no Idempotency-Key: each message
// is idempotent on its messageId, in the ledger.
func addRoutes(r *gin.Engine, d Deps) {
	r.GET("/healthz", httpserve.InternalHealthz(d.Workers))
	// The process's metrics, for the monitoring network: behind their own
	// token when MetricsToken is set, never the partners' token
	// (docs/operations.md, "Metrics").
	metrics := gin.WrapH(d.Metrics.Handler())
	if d.MetricsToken != "" {
		r.GET("/metrics", requireToken(d.MetricsToken), metrics)
	} else {
		r.GET("/metrics", metrics)
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
