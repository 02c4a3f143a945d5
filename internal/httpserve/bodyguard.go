package httpserve

import (
	"net/http"
	"time"

	"github.com/paygate/gateway/internal/httplimits"
)

// GuardBodyHandler puts the API's body deadlines (GuardBody) on a plain
// net/http handler: the web console's, which is no gin router but must not
// hold a stalled body for its whole read time either (issue 27, 8d). Every
// read of the body must bring bytes within lim's BodyIdleTimeout, and the
// whole body must be in within the handler's time (RequestBudget less the
// header and answer shares), counted from when the handler starts. A read
// past either fails with an error whose Timeout() is true; the handler
// answers it (the console with a 408).
func GuardBodyHandler(h http.Handler, lim httplimits.Limits) http.Handler {
	lim = lim.WithDefaults()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		done := GuardBody(w, r, lim.BodyIdleTimeout, time.Now().Add(lim.HandlerTimeout()))
		defer done()
		h.ServeHTTP(w, r)
	})
}
