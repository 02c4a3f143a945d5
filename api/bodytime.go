package api

import (
	"fmt"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/internal/httpserve"
	"github.com/paygate/gateway/postings"
)

// guardBody bounds the reads of a request's body (httpserve.GuardBody):
// each must bring bytes within idle, and the whole body must be in before
// the handler's deadline (the request context's). A body that stalls or
// drags ends the request with a 408 in the envelope (readBody), and its
// connection is closed. After the handler, an unread rest of the body gets
// idle more to arrive (within the handler's deadline), for net/http to drop
// it; then the answer goes out, and the connection closes if the rest did
// not come.
func guardBody(idle time.Duration) gin.HandlerFunc {
	return func(c *gin.Context) {
		end, _ := c.Request.Context().Deadline()
		done := httpserve.GuardBody(c.Writer, c.Request, idle, end)
		defer done()
		c.Next()
	}
}

// errBodyTimeout is the 408 of a body that did not arrive in time.
func errBodyTimeout(e *httpserve.BodyTimeoutError) error {
	msg := fmt.Sprintf("no data for %v: send the body without pausing", e.Idle)
	if e.Whole {
		msg = "not complete within the request's time: send it faster"
	}
	return &postings.Error{Code: postings.EINVALID, Reason: reasonBodyTimeout, Field: "body", Message: msg}
}
