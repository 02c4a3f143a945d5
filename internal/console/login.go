package console

import (
	"net/http"
	"strings"
	"time"
)

// Login (docs/console.md, "Signing in"). One form: login, password, and the
// TOTP code for the roles that need one. Every answer to a failed attempt is
// the same sentence, whether the login exists, the password is wrong, the
// code is wrong or the user is locked, so that the form tells an attacker
// nothing; the reason is in console_login_attempts.

type loginData struct {
	LoginCSRF string
	Login     string
	Message   string
}

const loginFailed = "Wrong login, password or code, or too many attempts: wait and try again."

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	if sess, err := s.loadSession(r); err == nil && sess != nil {
		http.Redirect(w, r, homeOf(sess.user), http.StatusSeeOther)
		return
	}
	s.showLogin(w, r, http.StatusOK, "", "")
}

// showLogin renders the form with a fresh login CSRF token in its cookie.
func (s *Server) showLogin(w http.ResponseWriter, r *http.Request, status int, login, msg string) {
	tok, err := newToken()
	if err != nil {
		s.internal(w, r, err)
		return
	}
	setCookie(w, loginCookie, tok)
	s.render(w, r, status, "login", "Sign in", loginData{LoginCSRF: tok, Login: login, Message: msg})
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if !sameToken(r.PostFormValue(csrfField), cookieValue(r, loginCookie)) {
		s.fail(w, r, http.StatusForbidden, "This form has no valid CSRF token. Reload the page and try again.")
		return
	}
	ctx := r.Context()
	login := strings.TrimSpace(r.PostFormValue("login"))
	pw := r.PostFormValue("password")
	code := strings.TrimSpace(r.PostFormValue("totp"))
	addr := clientAddr(r)
	now := s.now()
	if len(login) > 64 || !loginRE.MatchString(login) {
		s.refuseLogin(w, r, clip(login, 64), "bad_login")
		return
	}
	// Too many failures from this address: refused before any hash is
	// computed, so that a flood costs the server nothing.
	n, err := s.store.addressFailures(ctx, addr, now.Add(-s.cfg.LockoutFor))
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if n >= s.cfg.AddressFailures {
		w.Header().Set("Retry-After", "60")
		s.refuseLogin(w, r, login, "address_limited")
		return
	}
	u, err := s.store.userByLogin(ctx, login)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if u == nil {
		CheckPassword(dummyHash(), pw) // the same cost as a known login
		s.refuseLogin(w, r, login, "unknown_login")
		return
	}
	if u.lockedUntil.Valid && u.lockedUntil.Time.After(now) {
		s.refuseLogin(w, r, login, "locked")
		return
	}
	if !CheckPassword(u.passwordHash, pw) {
		s.loginFailure(w, r, u, "bad_password")
		return
	}
	if u.disabled {
		s.refuseLogin(w, r, login, "disabled")
		return
	}
	step, err := s.totpStepOf(u, code, now)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if step < 0 {
		s.loginFailure(w, r, u, "bad_totp")
		return
	}
	fresh, err := s.store.loginSucceeded(ctx, u.ID, step)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if !fresh {
		s.loginFailure(w, r, u, "totp_replayed")
		return
	}
	if err := s.store.recordAttempt(ctx, login, addr, true, "ok", now); err != nil {
		s.internal(w, r, err)
		return
	}
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
	key, err := b32.DecodeString(string(secret))
	if err != nil {
		return 0, err
	}
	if step := checkTOTP(key, code, now); step > 0 {
		return step, nil
	}
	return -1, nil
}

// loginFailure counts a failure against a known user (locking it at the
// limit) and refuses.
func (s *Server) loginFailure(w http.ResponseWriter, r *http.Request, u *userRow, reason string) {
	if _, err := s.store.loginFailed(r.Context(), u.ID, s.cfg.LockoutFailures, s.now().Add(s.cfg.LockoutFor)); err != nil {
		s.internal(w, r, err)
		return
	}
	s.refuseLogin(w, r, u.Login, reason)
}

func (s *Server) refuseLogin(w http.ResponseWriter, r *http.Request, login, reason string) {
	if err := s.store.recordAttempt(r.Context(), login, clientAddr(r), false, reason, s.now()); err != nil {
		s.internal(w, r, err)
		return
	}
	status := http.StatusUnauthorized
	if reason == "address_limited" {
		status = http.StatusTooManyRequests
	}
	s.showLogin(w, r, status, login, loginFailed)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request, sess *session) {
	if err := s.store.deleteSession(r.Context(), tokenHash(cookieValue(r, sessionCookie))); err != nil {
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
