package httpserve

import (
	"testing"

	"github.com/paygate/gateway/internal/httplimits"
)

// NewHTTPServer's deadlines are the Limits': headers, then the rest of the
// budget for writing, and a header backstop far above the enveloped bound.
func TestNewHTTPServerDeadlines(t *testing.T) {
	t.Parallel()
	lim := httplimits.Limits{}.WithDefaults()
	srv := NewHTTPServer(nil, httplimits.Limits{}, nil)
	if srv.ReadHeaderTimeout != lim.HeaderTimeout || srv.WriteTimeout != lim.RequestBudget-lim.HeaderTimeout ||
		srv.ReadTimeout != lim.RequestBudget-lim.WriteReserve || srv.IdleTimeout != lim.IdleTimeout ||
		srv.MaxHeaderBytes < 2*lim.HeaderBytesMax || srv.ErrorLog == nil {
		t.Fatalf("server %+v for limits %+v", srv, lim)
	}
}
