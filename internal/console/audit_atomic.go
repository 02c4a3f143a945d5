package console

import (
	"errors"
	"net/http"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/console/store"
	"github.com/paygate/gateway/postings"
)

// Atomic rows, for the actions on the console's own tables (console_users
// and console_sessions: a user created, disabled, enabled, a password
// reset), whose SQL the console's store runs itself: the action's
// statements and its row are one transaction, committed together or not at
// all. No pending state, nothing to resolve: the row says 'ok' because it
// only exists if the action does. An action that fails rolls its row back
// with it and leaves a 'failed' row of its own afterwards (record: nothing
// happened, so nothing waits for that row).

// atomicAction runs fn with its row (outcome ok) in one transaction. On an
// error it has answered: 503 when the row could not be written, else the
// action's error as onErr answers it, after a 'failed' row.
func (s *Server) atomicAction(w http.ResponseWriter, r *http.Request, sess *session, action, target, detail string,
	fn func(bun.IDB) error, onErr func(error)) bool {
	err := s.store.Atomically(r.Context(), s.entryOf(r, sess, "ok", 0, action, target, detail), fn)
	if err == nil {
		return true
	}
	if re := (*store.AuditRowError)(nil); errors.As(err, &re) {
		s.auditUnavailable(w, r, action, err)
		return false
	}
	s.record(r, sess, "failed", 0, action, target, joinDetail(detail, postings.AsError(err).Error()))
	onErr(err)
	return false
}
