package console

import (
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/paygate/gateway/internal/console/auth"
	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/internal/console/store"
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
	case len(cur) > auth.PasswordLenMax:
		return postings.FieldErrorf("currentPassword", "at most %d bytes", auth.PasswordLenMax)
	case needsTOTP && !totpCodeRE.MatchString(code):
		return postings.FieldErrorf("totp", "must be the 6 digits your authenticator app shows")
	}
	if err := auth.CheckPasswordRules(pw); err != nil {
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
		s.accountRefuse(w, r, sess, http.StatusBadRequest, host.FieldMessage(err))
		return
	}
	refuse := func(status int, msg string) { s.accountRefuse(w, r, sess, status, msg) }
	if !s.confirmUser(w, r, sess, "account.password", "account_", cur, code, refuse) {
		return
	}
	ctx := r.Context()
	now, addr := s.now(), host.ClientAddr(r)
	hash, err := auth.HashPassword(pw)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	tok, err := auth.NewToken()
	if err != nil {
		s.internal(w, r, err)
		return
	}
	// The TOTP step was taken by the check (store.succeed): 0 here.
	ended, err := s.store.ChangePassword(ctx, store.PasswordChange{User: sess.user.ID, Hash: hash,
		OldToken: auth.TokenHash(cookieValue(r, sessionCookie)), NewToken: auth.TokenHash(tok), Now: now, Addr: addr})
	switch {
	case errors.Is(err, errSessionGone): // ended between the guard and here
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	case err != nil:
		s.internal(w, r, err)
		return
	}
	setCookie(w, sessionCookie, tok)
	s.record(r, sess, "ok", 0, "account.password", sess.user.Login, "other sessions ended: "+strconv.FormatInt(ended, 10))
	http.Redirect(w, r, "/account?changed=1", http.StatusSeeOther)
}
