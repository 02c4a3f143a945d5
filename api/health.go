package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// handleHealthz answers as long as the process serves HTTP: liveness.
func handleHealthz() gin.HandlerFunc {
	return func(c *gin.Context) {
		c.JSON(http.StatusOK, gin.H{"status": "ok"})
	}
}

// readyTimeout bounds the database check of /readyz.
const readyTimeout = 2 * time.Second

// handleReadyz answers 200 only when the database answers: readiness, for a
// load balancer to stop sending traffic during an outage.
func handleReadyz(db Pinger) gin.HandlerFunc {
	return func(c *gin.Context) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), readyTimeout)
		defer cancel()
		if err := db.PingContext(ctx); err != nil {
			c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "database": "unreachable"})
			return
		}
		c.JSON(http.StatusOK, gin.H{"status": "ok"})
	}
}
