package console

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/paygate/gateway/postings"
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

// auditTargetMax and auditDetailMax are the columns' bounds (characters).
const (
	auditTargetMax = 200
	auditDetailMax = 1000
)

// safeValue is v as the trail may hold it in at most max characters.
func safeValue(v string, max int) string {
	if postings.CheckText("", v, max) == nil {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); {
		r, n := utf8.DecodeRuneInString(v[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02X`, v[i])
		case r == '\\':
			b.WriteString(`\\`)
		case !postings.TextRuneAllowed(r):
			fmt.Fprintf(&b, `\u{%04X}`, r)
		default:
			b.WriteString(v[i : i+n])
		}
		i += n
	}
	esc := b.String()
	sum := sha256.Sum256([]byte(v))
	suffix := " [sha256 " + hex.EncodeToString(sum[:]) + "]"
	keep := max - utf8.RuneCountInString(suffix)
	if keep < 0 {
		keep = 0 // a bound shorter than the hash: the hash alone, past it
	}
	if n := utf8.RuneCountInString(esc); n > keep {
		esc = string([]rune(esc)[:keep])
	}
	return esc + suffix
}

// entryOf is the row of an action of sess, its values made safe.
func (s *Server) entryOf(r *http.Request, sess *session, outcome string, merchant int64, action, target, detail string) auditEntry {
	if merchant == 0 {
		merchant = sess.user.MerchantID
	}
	return auditEntry{At: s.now(), UserID: sess.user.ID, Login: safeValue(sess.user.Login, 64),
		Role: string(sess.user.Role), MerchantID: merchant, Action: action, Target: safeValue(target, auditTargetMax),
		Detail: safeValue(detail, auditDetailMax), Outcome: outcome, Address: safeValue(clientAddr(r), 64)}
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
