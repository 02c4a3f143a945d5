package console

import (
	"errors"
	"net/http"
	"strconv"
)

// Reading a form's body (docs/console.md, "Forms"). The body is read once,
// here, before any field is looked at, so that a body that did not arrive
// is said so rather than taken for a form without its CSRF token: past
// its bound a 413; stalled (a pause past the API's body idle time, or not
// complete within the request's time: the API's deadlines, which the
// listener's handler puts on every read, httpserve.GuardBodyHandler) a 408 that
// closes the connection; unreadable a 400.

// formError is the status and message of a body that cannot be read as a
// form; 0 when it was read.
func formError(err error) (int, string) {
	var mb *http.MaxBytesError
	var timeout interface{ Timeout() bool }
	switch {
	case err == nil || errors.Is(err, http.ErrNotMultipart):
		return 0, ""
	case errors.As(err, &mb):
		return http.StatusRequestEntityTooLarge, "The form is larger than " + strconv.FormatInt(mb.Limit>>10, 10) + " KiB."
	case errors.As(err, &timeout) && timeout.Timeout():
		return http.StatusRequestTimeout, "The form did not arrive in time: send it again."
	}
	return http.StatusBadRequest, "The form cannot be read."
}

// parseForm reads the form and, when it cannot, answers and returns false.
func (s *Server) parseForm(w http.ResponseWriter, r *http.Request) bool {
	// ParseForm first: ParseMultipartForm answers a form that is not
	// multipart with ErrNotMultipart and drops ParseForm's error, a
	// stalled or oversized body's among them.
	err := r.ParseForm()
	if err == nil {
		err = r.ParseMultipartForm(formBytesMax)
	}
	status, msg := formError(err)
	if status == 0 {
		return true
	}
	if status == http.StatusRequestTimeout {
		// The rest of the body may still come; the connection cannot be
		// read past it, so it ends with this answer.
		w.Header().Set("Connection", "close")
	}
	s.fail(w, r, status, msg)
	return false
}
