package httpserve

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// A stalled body (docs/security.md, "Time-outs"). net/http puts no deadline
// on reading a body: a client that sends its headers and part of a declared
// body, then stops, holds its connection — and the handler reading it —
// for as long as it likes. Worse, when a handler answers without reading
// the body (a 401, a 429), net/http reads the rest of the body before it
// writes the answer, to keep the connection: the gateway logs an answer the
// client never gets. GuardBody puts a deadline on every read of the body,
// and on what net/http reads after the handler.

// GuardBody replaces r's body with one whose every read must bring bytes
// within idle, the whole body being in by end (the handler's deadline;
// zero: none). A read past either fails with a *BodyTimeoutError. Call the
// function it returns when the handler is done: an unread rest of the body
// then gets idle more to arrive (never past end), for net/http to drop it;
// one that cannot be set leaves net/http's (the server's ReadTimeout).
func GuardBody(w http.ResponseWriter, r *http.Request, idle time.Duration, end time.Time) (done func()) {
	if r.Body == nil || r.Body == http.NoBody {
		return func() {}
	}
	rc := http.NewResponseController(w)
	b := &deadlineBody{src: r.Body, rc: rc, idle: idle, end: end}
	r.Body = b
	return func() {
		if !b.eof && b.err == nil {
			_ = rc.SetReadDeadline(b.nextDeadline())
		}
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
		b.err = &BodyTimeoutError{Whole: whole, Idle: b.idle}
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

// BodyTimeoutError is a body that did not arrive in time: it paused longer
// than Idle, or was not complete by the handler's deadline (Whole).
type BodyTimeoutError struct {
	Whole bool
	Idle  time.Duration
}

func (e *BodyTimeoutError) Error() string {
	if e.Whole {
		return "the body was not complete by the request's deadline"
	}
	return fmt.Sprintf("the body paused for more than %v", e.Idle)
}

// Timeout says that the body did not arrive in time, as net's timeouts say
// it, so that a handler can tell it from a malformed body without
// importing this package.
func (e *BodyTimeoutError) Timeout() bool { return true }
