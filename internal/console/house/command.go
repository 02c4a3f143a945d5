package house

import (
	"context"
	"net/http"

	"github.com/paygate/gateway/postings"
)

// command runs a domain command between its write-ahead row and that
// row's outcome (internal/console/audit_intent.go), then answers: back to
// the page at done (POST-redirect-GET: the page says what was saved); the
// user's mistake (EINVALID) is refuse's, which shows the form again with
// the domain's refusal; anything else is the domain's error page. The
// merchant page's settings (merchantCommand), the BIN catalogue and the
// FX rates run their commands through it.
func (s *pages) command(w http.ResponseWriter, r *http.Request, merchant int64, action, target, detail, done string,
	run func(context.Context) error, refuse func(*postings.Error)) {
	a, ok := s.h.Begin(w, r, merchant, action, target, detail)
	if !ok {
		return
	}
	err := run(r.Context())
	a.Finish(err, 0, "", "")
	switch {
	case postings.ErrorCode(err) == postings.EINVALID:
		refuse(postings.AsError(err))
	case err != nil:
		s.h.DomainError(w, r, err)
	default:
		http.Redirect(w, r, done, http.StatusSeeOther)
	}
}
