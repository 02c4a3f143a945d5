package api

import (
	"fmt"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/internal/httpserve"
	"github.com/paygate/gateway/postings"
)

// limitHeaders answers 431 in the envelope when the request line and the
// headers are larger than n bytes. net/http has its own bound
// (http.Server.MaxHeaderBytes) but answers it in plain text; it is set far
// above n (httplimits.HeaderBytesBackstop), so that this is the bound
// clients meet.
func limitHeaders(n int) gin.HandlerFunc {
	return func(c *gin.Context) {
		if httpserve.HeaderBytes(c.Request) > n {
			writeError(c, &postings.Error{Code: postings.EINVALID, Reason: reasonHeadersTooLarge, Field: "headers",
				Message: fmt.Sprintf("the request line and headers are larger than %d bytes", n)})
			return
		}
		c.Next()
	}
}
