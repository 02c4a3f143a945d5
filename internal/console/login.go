package console

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/paygate/gateway/internal/console/auth"
	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/postings"
)

// Login (docs/console.md, "Signing in"). One form: login, the shop number
// of a merchant's user, password, and the TOTP code for the roles that
// need one; the check is checkCredentials (lockout.go). Every answer to a failed attempt is
// the same sentence, whether the login exists, the password is wrong, the
// code is wrong or the user is locked, so that the form tells an attacker
// nothing; the reason is in console_login_attempts.

type loginData struct {
	LoginCSRF string
	Login     string
	ShopNo    string
	Message   string
}

const (
	loginFailed = "Wrong login, password or code, or too many attempts: wait and try again."
	loginBusy   = "The console is busy: try again in a moment."
)

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	if sess, err := s.loadSession(r); err == nil && sess != nil {
		http.Redirect(w, r, homeOf(sess.user), http.StatusSeeOther)
		return
	}
	s.showLogin(w, r, http.StatusOK, loginData{})
}

// showLogin renders the form with a fresh login CSRF token in its cookie.
func (s *Server) showLogin(w http.ResponseWriter, r *http.Request, status int, d loginData) {
	tok, err := auth.NewToken()
	if err != nil {
		s.internal(w, r, err)
		return
	}
	setCookie(w, loginCookie, tok)
	d.LoginCSRF = tok
	s.render(w, r, status, "login", "Sign in", d)
}

// A login names its scope (logins are unique per scope, sql/0017): the
// shop number of the user's merchant, or nothing for the house's users.
// shopNoMax bounds it as the API bounds a reference.
const shopNoMax = 64

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if !s.parseForm(w, r) {
		return
	}
	if !auth.SameToken(r.PostFormValue(csrfField), cookieValue(r, loginCookie)) {
		s.fail(w, r, http.StatusForbidden, "This form has no valid CSRF token. Reload the page and try again.")
		return
	}
	ctx := r.Context()
	login := strings.TrimSpace(r.PostFormValue("login"))
	shop := strings.TrimSpace(r.PostFormValue("shopNo"))
	pw := r.PostFormValue("password")
	code := strings.TrimSpace(r.PostFormValue("totp"))
	addr := host.ClientAddr(r)
	if !loginRE.MatchString(login) || len(shop) > shopNoMax || (shop != "" && !postings.IsRefText(shop)) {
		// No login can be this (invalid UTF-8, NUL, a surrogate, a
		// character outside the logins' alphabet): the form's one refusal,
		// a 400, counted against the address like any failed try. What was
		// typed is neither stored nor shown again.
		if err := s.store.RecordAttempt(ctx, "", addr, false, "bad_login", s.now()); err != nil {
			s.internal(w, r, err)
			return
		}
		s.showLogin(w, r, http.StatusBadRequest, loginData{Message: loginFailed})
		return
	}
	out, err := s.checkCredentials(ctx, addr, "", func(ctx context.Context) (*userRow, error) {
		return s.store.userInScope(ctx, shop, login)
	}, pw, code)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	d := loginData{Login: login, ShopNo: shop, Message: loginFailed}
	switch {
	case out.status == http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "1")
		d.Message = loginBusy
		s.showLogin(w, r, out.status, d)
		return
	case out.status == http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "60")
		s.showLogin(w, r, out.status, d)
		return
	case !out.ok:
		s.showLogin(w, r, http.StatusUnauthorized, d)
		return
	}
	u := out.user
	if err := s.startSession(w, r, u.ID); err != nil {
		s.internal(w, r, err)
		return
	}
	clearCookie(w, loginCookie)
	s.record(r, &session{user: &u.User}, "ok", 0, "session.login", u.Login, "")
	http.Redirect(w, r, homeOf(&u.User), http.StatusSeeOther)
}

// totpStepOf checks the user's TOTP code: 0 when the user signs in
// without one, the step the code is good for, or -1 when it is wrong. The
// step is taken (a code is good once) by whoever stores the success.
func (s *Server) totpStepOf(u *userRow, code string, now time.Time) (int64, error) {
	if !u.Role.needsTOTP() && u.totpSealed == nil {
		return 0, nil
	}
	secret, err := s.cfg.Sealer.Open(u.totpSealed, totpContext(u.Login))
	if err != nil {
		return 0, err
	}
	key, err := auth.DecodeTOTPSecret(string(secret))
	if err != nil {
		return 0, err
	}
	if step := auth.CheckTOTP(key, code, now); step > 0 {
		return step, nil
	}
	return -1, nil
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request, sess *session) {
	if err := s.store.DeleteSession(r.Context(), auth.TokenHash(cookieValue(r, sessionCookie))); err != nil {
		s.internal(w, r, err)
		return
	}
	s.record(r, sess, "ok", 0, "session.logout", sess.user.Login, "")
	clearCookie(w, sessionCookie)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// homeOf is where a user lands after signing in.
func homeOf(u *User) string {
	switch u.Role {
	case RoleOperator:
		return "/operator/merchants"
	case RoleAuditor:
		return "/audit/journal"
	}
	return "/balances"
}
