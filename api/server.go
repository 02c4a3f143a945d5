// Package api is the HTTP surface of the gateway, on gin: the /shop JSON
// API in the envelope of the spec, and the operational endpoints. It alone
// knows gin; handlers turn requests into ledger calls and ledger results
// into envelopes.
package api

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"
)

// Pinger is what readiness needs: the database answers.
type Pinger interface {
	PingContext(ctx context.Context) error
}

// Deps are the server's dependencies, given explicitly.
type Deps struct {
	Log *slog.Logger
	DB  Pinger
}

// NewServer returns the gateway's HTTP handler.
func NewServer(d Deps) http.Handler {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = false
	addRoutes(r, d)
	return r
}
