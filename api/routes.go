package api

import "github.com/gin-gonic/gin"

// addRoutes is the whole API surface in one place.
func addRoutes(r *gin.Engine, d Deps) {
	r.GET("/healthz", handleHealthz())
	r.GET("/readyz", handleReadyz(d.DB))
}
