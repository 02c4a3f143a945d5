package api

import (
	"net/http"
	"time"
)

// GuardBodyHandler puts the API's body deadlines (guardBody, bodytime.go)
// on a plain net/http handler: the web console's, which is no gin router
// but must not hold a stalled body for its whole read time either (issue
// 27, 8d). Every read of the body must bring bytes within lim's
// BodyIdleTimeout, and the whole body must be in within the handler's time
// (RequestBudget less the header and answer shares), counted from when the
// handler starts. A read past either fails with an error whose Timeout()
// is true; the handler answers it (the console with a 408).
func GuardBodyHandler(h http.Handler, lim Limits) http.Handler {
	lim = lim.WithDefaults()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		b := &deadlineBody{src: r.Body, rc: rc, idle: lim.BodyIdleTimeout, end: time.Now().Add(lim.HandlerTimeout())}
		r.Body = b
		defer func() {
			if !b.eof && b.err == nil {
				// As guardBody: what net/http reads of an unread rest after
				// the handler gets idle more, never past the handler's time.
				_ = rc.SetReadDeadline(b.nextDeadline())
			}
		}()
		h.ServeHTTP(w, r)
	})
}

// Timeout says that the body did not arrive in time, as net's timeouts say
// it, so that a handler outside this package can tell it from a malformed
// body without importing the API.
func (e *bodyTimeoutError) Timeout() bool { return true }
