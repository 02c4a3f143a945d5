package httpserve

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// Healthz answers as long as the process serves HTTP: liveness.
func Healthz() gin.HandlerFunc {
	return func(c *gin.Context) {
		c.JSON(http.StatusOK, gin.H{"status": "ok"})
	}
}

// WorkerHealth is what a background worker did last (internal/workers'
// Health), as the internal listener's /healthz shows it. The last error
// itself is only logged: /healthz needs no token, and an error's text may
// name hosts and tables.
type WorkerHealth struct {
	Name    string    `json:"name"`
	Running bool      `json:"running"`
	Steps   int64     `json:"steps"`            // steps run since start
	LastRun time.Time `json:"lastRun,omitzero"` // when the last step ended
	LastOK  time.Time `json:"lastOk,omitzero"`  // when a step last ended without an error
	Failing bool      `json:"failing"`          // the last step failed
}

// InternalHealthz is the internal listener's liveness: 200 as long as
// the process serves HTTP, with each worker's health when workers run in
// this process. A failing worker does not make it fail: restarting the
// process does not cure a database outage, and the requests it serves do
// not need the workers; a monitor alerts on "failing" or a stale "lastOk".
func InternalHealthz(workers func() []WorkerHealth) gin.HandlerFunc {
	if workers == nil {
		return Healthz()
	}
	return func(c *gin.Context) {
		c.JSON(http.StatusOK, gin.H{"status": "ok", "workers": workers()})
	}
}

// Pinger is what readiness needs: the database answers.
type Pinger interface {
	PingContext(ctx context.Context) error
}

// readyTimeout bounds the database check of /readyz.
const readyTimeout = 2 * time.Second

// NotReady is a reason for /readyz to answer 503 (api.Deps.Ready): what the
// body says, with no host names or errors in it (it needs no token).
type NotReady string

func (r NotReady) Error() string { return string(r) }

// Readyz answers 200 only when the gateway can take writes:
// readiness, for a load balancer to stop sending traffic during an outage,
// while the database is read-only, and while the gateway drains before it
// stops. ready decides when set (serve: the database Watch's cached verdict
// and the drain); otherwise the database must answer a ping.
func Readyz(db Pinger, ready func(context.Context) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), readyTimeout)
		defer cancel()
		if ready != nil {
			if err := ready(ctx); err != nil {
				why := "unavailable"
				if nr, ok := err.(NotReady); ok {
					why = string(nr)
				}
				c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "reason": why})
				return
			}
			c.JSON(http.StatusOK, gin.H{"status": "ok"})
			return
		}
		if err := db.PingContext(ctx); err != nil {
			c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "database": "unreachable"})
			return
		}
		c.JSON(http.StatusOK, gin.H{"status": "ok"})
	}
}
