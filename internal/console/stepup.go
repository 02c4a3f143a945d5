package console

import (
	"context"
	"net/http"
	"strings"

	"github.com/paygate/gateway/internal/console/auth"
	"github.com/paygate/gateway/internal/console/host"
)

// Step-up (docs/console.md, "Step-up"): the actions that give lasting
// power — creating a user, enabling one again, resetting a password, a
// role change, and one's own password change — ask for the acting user's
// password again, and the TOTP code for the roles that sign in with one. A
// stolen session (a browser left open, a cookie taken) is then not enough
// to mint a user or take over one. The check is the login's
// (checkCredentials): the same lockout, the same address limit, the same
// single hash; the failure that locks the user also ends the session
// that made it (a session guessing its own user's password is likely not
// that user's).

// confirmMsg is the one refusal of a wrong confirmation, whatever the
// reason, as the login form has one.
func confirmMsg(u *User) string {
	if u.Role.needsTOTP() {
		return "currentPassword: the password or the code is wrong, or too many attempts: wait and try again."
	}
	return "currentPassword: wrong, or too many attempts: wait and try again."
}

// stepUpFields checks the confirmation's fields before anything is
// hashed; "" when they are well formed, else the refusal naming the field.
// Not counted: they compare nothing with the stored password.
func stepUpFields(u *User, cur, code string) string {
	switch {
	case cur == "":
		return "currentPassword: type your password to confirm"
	case len(cur) > auth.PasswordLenMax:
		return "currentPassword: at most 128 bytes"
	case u.Role.needsTOTP() && !totpCodeRE.MatchString(code):
		return "totp: the 6 digits your authenticator app shows"
	}
	return ""
}

// stepUp checks the form's currentPassword (and totp) for the session's
// user before action. It returns true when they are right; otherwise it
// has answered, through refuse for the page's own refusal.
func (s *Server) stepUp(w http.ResponseWriter, r *http.Request, sess *session, action string, refuse func(status int, msg string)) bool {
	cur, code := r.PostFormValue("currentPassword"), strings.TrimSpace(r.PostFormValue("totp"))
	if msg := stepUpFields(sess.user, cur, code); msg != "" {
		refuse(http.StatusBadRequest, msg)
		return false
	}
	return s.confirmUser(w, r, sess, action, "stepup_", cur, code, refuse)
}

// confirmUser checks the session's user's password and code (the step-up's
// and /account's), records a refusal in the audit trail and answers it.
func (s *Server) confirmUser(w http.ResponseWriter, r *http.Request, sess *session, action, purpose, cur, code string,
	refuse func(status int, msg string)) bool {
	out, err := s.checkCredentials(r.Context(), host.ClientAddr(r), purpose, func(ctx context.Context) (*userRow, error) {
		return s.store.userByID(ctx, sess.user.ID)
	}, cur, code)
	switch {
	case err != nil:
		s.internal(w, r, err)
		return false
	case out.ok:
		return true
	case out.status == http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "1")
		refuse(out.status, loginBusy)
		return false
	}
	if !out.locked {
		s.record(r, sess, "refused", 0, action, sess.user.Login, "confirmation "+out.reason)
		status := http.StatusBadRequest
		if out.status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "60")
			status = out.status
		}
		refuse(status, confirmMsg(sess.user))
		return false
	}
	s.record(r, sess, "refused", 0, action, sess.user.Login, "confirmation "+out.reason+"; locked, session ended")
	if err := s.store.DeleteSession(r.Context(), auth.TokenHash(cookieValue(r, sessionCookie))); err != nil {
		s.internal(w, r, err)
		return false
	}
	clearCookie(w, sessionCookie)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
	return false
}
