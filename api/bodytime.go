package api

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/postings"
)

// A stalled body (docs/security.md, "Time-outs"). net/http puts no deadline
// on reading a body: a client that sends its headers and part of a declared
// body, then stops, holds its connection — and the handler reading it —
// for as long as it likes. Worse, when a handler answers without reading
// the body (a 401, a 429), net/http reads the rest of the body before it
// writes the answer, to keep the connection: the gateway logs an answer the
// client never gets. guardBody puts a deadline on every read of the body,
// and on what net/http reads after the handler.

// guardBody bounds the reads of a request's body: each must bring bytes
// within idle, and the whole body must be in before the handler's deadline
// (the request context's). A body that stalls or drags ends the request
// with a 408 in the envelope, and its connection is closed. After the
// handler, an unread rest of the body gets idle more to arrive (within the
// handler's deadline), for net/http to drop it; then the answer goes out,
// and the connection closes if the rest did not come.
func guardBody(idle time.Duration) gin.HandlerFunc {
	return func(c *gin.Context) {
		r := c.Request
		if r.Body == nil || r.Body == http.NoBody {
			c.Next()
			return
		}
		rc := http.NewResponseController(c.Writer)
		end, _ := r.Context().Deadline()
		b := &deadlineBody{src: r.Body, rc: rc, idle: idle, end: end}
		r.Body = b
		defer func() {
			if !b.eof && b.err == nil {
				// The deadline of net/http's own reads after the handler:
				// idle, but never past the handler's deadline, so that the
				// answer still has its reserve. One that cannot be set
				// leaves net/http's (the server's ReadTimeout).
				_ = rc.SetReadDeadline(b.nextDeadline())
			}
		}()
		c.Next()
	}
}

// deadlineBody is a request body whose every read has a deadline: idle from
// now, or the handler's deadline if that comes first.
type deadlineBody struct {
	src  io.ReadCloser
	rc   *http.ResponseController
	idle time.Duration
	end  time.Time // the handler's deadline; zero: none
	eof  bool
	err  error // once the body has timed out, every read says so
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	deadline := b.nextDeadline()
	whole := deadline.Equal(b.end)
	// A writer that cannot set deadlines (a test's recorder) reads without.
	_ = b.rc.SetReadDeadline(deadline)
	n, err := b.src.Read(p)
	switch {
	case err == io.EOF:
		b.eof = true
		// net/http now reads in the background (to notice the client
		// leaving); its read must not fail at the idle deadline, which would
		// cancel the request. The handler's deadline is the request's end.
		_ = b.rc.SetReadDeadline(b.end)
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
		b.err = &bodyTimeoutError{whole: whole, idle: b.idle, end: b.end}
		err = b.err
	}
	return n, err
}

func (b *deadlineBody) Close() error { return b.src.Close() }

// nextDeadline is the deadline of the next read: idle from now, or the
// handler's deadline if that comes first.
func (b *deadlineBody) nextDeadline() time.Time {
	d := time.Now().Add(b.idle)
	if !b.end.IsZero() && !d.Before(b.end) {
		return b.end
	}
	return d
}

// bodyTimeoutError is a body that did not arrive in time: it paused longer
// than idle, or was not complete by the handler's deadline (whole).
type bodyTimeoutError struct {
	whole bool
	idle  time.Duration
	end   time.Time
}

func (e *bodyTimeoutError) Error() string {
	if e.whole {
		return "the body was not complete by the request's deadline"
	}
	return fmt.Sprintf("the body paused for more than %v", e.idle)
}

// errBodyTimeout is the 408 of a body that did not arrive in time.
func errBodyTimeout(e *bodyTimeoutError) error {
	msg := fmt.Sprintf("no data for %v: send the body without pausing", e.idle)
	if e.whole {
		msg = "not complete within the request's time: send it faster"
	}
	return &postings.Error{Code: postings.EINVALID, Reason: reasonBodyTimeout, Field: "body", Message: msg}
}
