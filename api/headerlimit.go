package api

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/postings"
)

// limitHeaders answers 431 in the envelope when the request line and the
// headers are larger than n bytes. net/http has its own bound
// (http.Server.MaxHeaderBytes) but answers it in plain text; it is set far
// above n (httplimits.HeaderBytesBackstop), so that this is the bound
// clients meet.
func limitHeaders(n int) gin.HandlerFunc {
	return func(c *gin.Context) {
		if requestHeaderBytes(c.Request) > n {
			writeError(c, &postings.Error{Code: postings.EINVALID, Reason: reasonHeadersTooLarge, Field: "headers",
				Message: fmt.Sprintf("the request line and headers are larger than %d bytes", n)})
			return
		}
		c.Next()
	}
}

// requestHeaderBytes is the size of the request line and headers as an
// HTTP/1.1 client sends them: "METHOD URI PROTO\r\n", "Host: …\r\n", one
// "Name: value\r\n" per value, and the blank line.
func requestHeaderBytes(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + 2
	n += len("Host: ") + len(r.Host) + 2
	for name, values := range r.Header {
		for _, v := range values {
			n += len(name) + 2 + len(v) + 2
		}
	}
	return n + 2
}
