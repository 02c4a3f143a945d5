package console

import (
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/paygate/gateway/postings"
)

// A signed-in user changes their own password on /account, whatever the
// role (docs/console.md, "Your own password"). The current password is
// asked again, and the TOTP code for the roles that sign in with one: a
// session left open, or taken, must not be enough to take the account. A
// wrong one counts toward the same lockout as a wrong login (and the
// address's login limit), so the page is no password-guessing oracle; the
// failure that locks the user also ends the session that made it. The new
// password follows the rules of every password (CheckPasswordRules) and
// is hashed as they are (HashPassword). On success every other session of
// the user ends and this one gets a new token (sessionRotate).

var totpCodeRE = regexp.MustCompile(`^[0-9]{6}$`)

type accountData struct {
	NeedsTOTP bool
	LockAfter int    // failures in a row that lock, for the note
	Changed   bool   // the password was just changed
	Error     string // the form's refusal, naming the field
}

func accountPagePath(*http.Request) string { return "/account" }

func (s *Server) account(w http.ResponseWriter, r *http.Request, sess *session) {
	s.render(w, r, http.StatusOK, "account", "Account",
		accountData{NeedsTOTP: sess.user.Role.needsTOTP(), LockAfter: s.cfg.LockoutFailures, Changed: r.URL.Query().Get("changed") == "1"})
}

// accountRefuse re-renders the form with its refusal (never what was
// typed: the fields are passwords).
func (s *Server) accountRefuse(w http.ResponseWriter, r *http.Request, sess *session, status int, msg string) {
	s.render(w, r, status, "account", "Account", accountData{NeedsTOTP: sess.user.Role.needsTOTP(), LockAfter: s.cfg.LockoutFailures, Error: msg})
}

// checkPasswordForm checks the form's shape, before anything is hashed:
// each field is bounded, the new password follows the rules, is typed the
// same twice and is not the current one. These compare what was typed
// with what was typed, so they tell nothing about the stored password.
func checkPasswordForm(cur, code, pw, again string, needsTOTP bool) error {
	switch {
	case cur == "":
		return postings.FieldErrorf("currentPassword", "required")
	case len(cur) > passwordLenMax:
		return postings.FieldErrorf("currentPassword", "at most %d bytes", passwordLenMax)
	case needsTOTP && !totpCodeRE.MatchString(code):
		return postings.FieldErrorf("totp", "must be the 6 digits your authenticator app shows")
	}
	if err := CheckPasswordRules(pw); err != nil {
		// The rules name the field "password"; here it is newPassword.
		return postings.FieldErrorf("newPassword", "%s", postings.AsError(err).Message)
	}
	switch {
	case again != pw:
		return postings.FieldErrorf("confirmPassword", "must be the new password again")
	case pw == cur:
		return postings.FieldErrorf("newPassword", "must differ from the current password")
	}
	return nil
}

func (s *Server) accountPassword(w http.ResponseWriter, r *http.Request, sess *session) {
	cur, pw, again := r.PostFormValue("currentPassword"), r.PostFormValue("newPassword"), r.PostFormValue("confirmPassword")
	code := strings.TrimSpace(r.PostFormValue("totp"))
	if err := checkPasswordForm(cur, code, pw, again, sess.user.Role.needsTOTP()); err != nil {
		s.accountRefuse(w, r, sess, http.StatusBadRequest, fieldMessage(err))
		return
	}
	ctx := r.Context()
	now, addr := s.now(), clientAddr(r)
	// An address past the login limit is refused before any hash, as
	// /login refuses it.
	n, err := s.store.addressFailures(ctx, addr, now.Add(-s.cfg.LockoutFor))
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if n >= s.cfg.AddressFailures {
		w.Header().Set("Retry-After", "60")
		s.accountDenied(w, r, sess, http.StatusTooManyRequests, "address_limited")
		return
	}
	u, err := s.store.userByLogin(ctx, sess.user.Login)
	if err != nil || u == nil || u.ID != sess.user.ID {
		s.internal(w, r, errors.Join(err, errors.New("console: the session's user is not found")))
		return
	}
	if u.lockedUntil.Valid && u.lockedUntil.Time.After(now) {
		s.accountDenied(w, r, sess, http.StatusBadRequest, "locked")
		return
	}
	if !CheckPassword(u.passwordHash, cur) {
		s.accountFailure(w, r, sess, "bad_password")
		return
	}
	step, err := s.totpStepOf(u, code, now)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if step < 0 {
		s.accountFailure(w, r, sess, "bad_totp")
		return
	}
	hash, err := HashPassword(pw)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	tok, err := newToken()
	if err != nil {
		s.internal(w, r, err)
		return
	}
	ended, err := s.store.changePassword(ctx, passwordChange{user: u.ID, hash: hash, step: step,
		oldToken: tokenHash(cookieValue(r, sessionCookie)), newToken: tokenHash(tok), now: now, addr: addr})
	switch {
	case errors.Is(err, errTOTPReplayed):
		s.accountFailure(w, r, sess, "totp_replayed")
		return
	case errors.Is(err, errSessionGone): // ended between the guard and here
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	case err != nil:
		s.internal(w, r, err)
		return
	}
	setCookie(w, sessionCookie, tok)
	s.record(r, sess, "ok", 0, "account.password", u.Login, "other sessions ended: "+strconv.FormatInt(ended, 10))
	http.Redirect(w, r, "/account?changed=1", http.StatusSeeOther)
}

// accountFailure counts a wrong current password or code as a failed login
// would be, and refuses. The failure that locks the user ends this
// session too: a session guessing its own user's password is likely not
// that user's.
func (s *Server) accountFailure(w http.ResponseWriter, r *http.Request, sess *session, reason string) {
	locked, err := s.store.loginFailed(r.Context(), sess.user.ID, s.cfg.LockoutFailures, s.now().Add(s.cfg.LockoutFor))
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if !locked {
		s.accountDenied(w, r, sess, http.StatusBadRequest, reason)
		return
	}
	if err := s.store.recordAttempt(r.Context(), sess.user.Login, clientAddr(r), false, "account_"+reason, s.now()); err != nil {
		s.internal(w, r, err)
		return
	}
	s.record(r, sess, "refused", 0, "account.password", sess.user.Login, reason+"; locked, session ended")
	if err := s.store.deleteSession(r.Context(), tokenHash(cookieValue(r, sessionCookie))); err != nil {
		s.internal(w, r, err)
		return
	}
	clearCookie(w, sessionCookie)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// accountDenied records a refused change (in the login attempts, which the
// address limit counts, and the audit trail) and answers it with one
// message whatever the reason, as the login form does.
func (s *Server) accountDenied(w http.ResponseWriter, r *http.Request, sess *session, status int, reason string) {
	if err := s.store.recordAttempt(r.Context(), sess.user.Login, clientAddr(r), false, "account_"+reason, s.now()); err != nil {
		s.internal(w, r, err)
		return
	}
	s.record(r, sess, "refused", 0, "account.password", sess.user.Login, reason)
	msg := "currentPassword: wrong, or too many attempts: wait and try again."
	if sess.user.Role.needsTOTP() {
		msg = "currentPassword: the password or the code is wrong, or too many attempts: wait and try again."
	}
	s.accountRefuse(w, r, sess, status, msg)
}
