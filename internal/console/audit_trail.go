package console

import (
	"net/http"

	"github.com/paygate/gateway/internal/console/host"
)

// Writing the audit trail (docs/console.md, "The audit trail"). Two rules
// close the ways a row went missing:
//
//   - Every value is made safe before it is written, never dropped: text
//     that postings.CheckText accepts, within the column's bound, is written
//     as it is; anything else — invalid UTF-8 (an upload's file name, a path
//     segment such as %FF), NUL (%00), a bidirectional override, a value
//     past the bound — is written escaped (\xFF for a byte that is not
//     UTF-8, \u{202E} for a refused character, a backslash doubled), cut to
//     the bound, with the SHA-256 of the original bytes after it
//     ("… [sha256 ab12…]"). So PostgreSQL never refuses a row for its bytes
//     (SQLSTATE 22021), the trail shows what was sent without being
//     reordered by it, and the hash tells two values apart when the cut
//     made them look the same.
//   - No action without its row: how depends on whose transaction the
//     action runs in (audit_atomic.go for the console's own tables,
//     audit_intent.go for a domain's command).

// entryOf is the row of an action of sess, its values made safe.
func (s *Server) entryOf(r *http.Request, sess *session, outcome string, merchant int64, action, target, detail string) auditEntry {
	if merchant == 0 {
		merchant = sess.user.MerchantID
	}
	return auditEntry{At: s.now(), UserID: sess.user.ID, Login: host.SafeValue(sess.user.Login, 64),
		Role: string(sess.user.Role), MerchantID: merchant, Action: action, Target: host.SafeValue(target, host.AuditTargetMax),
		Detail: host.SafeValue(detail, host.AuditDetailMax), Outcome: outcome, Address: host.SafeValue(host.ClientAddr(r), 64)}
}

// record writes one row of the audit trail that goes with no action — a
// refusal, a read, a sign-in — so that nothing waits for it. A row that
// cannot be written is logged whole at ERROR, so that it is not lost.
func (s *Server) record(r *http.Request, sess *session, outcome string, merchant int64, action, target, detail string) {
	e := s.entryOf(r, sess, outcome, merchant, action, target, detail)
	if err := s.store.Audit(r.Context(), e); err != nil {
		s.cfg.Log.Error("console audit trail write failed", "err", err, "at", e.At, "user", e.UserID, "login", e.Login,
			"merchant", e.MerchantID, "action", e.Action, "target", e.Target, "detail", e.Detail, "outcome", e.Outcome, "address", e.Address)
	}
}

// auditUnavailable answers an action refused because its row cannot be
// written: nothing was done, 503 with Retry-After.
func (s *Server) auditUnavailable(w http.ResponseWriter, r *http.Request, action string, err error) {
	s.cfg.Log.Error("console audit trail cannot be written: action refused", "action", action, "err", err)
	w.Header().Set("Retry-After", "5")
	s.fail(w, r, http.StatusServiceUnavailable, "The audit trail cannot be written now, so nothing was done. Try again in a moment.")
}
