package console

import (
	"crypto/rand"
	"encoding/base32"
	"net/http"
	"strconv"
	"strings"

	"github.com/paygate/gateway/postings"
)

// A merchant admin manages the merchant's console users: lists them,
// creates one (admin, finance or read-only, of the admin's own merchant
// only), disables and enables one, and resets a password. The merchant is
// the session's and the role one of the three merchant roles, whatever
// the form says; a user of another merchant is answered as an unknown one.
// Passwords are made by the server (the CLI's rules and argon2id hash,
// CreateUser) and shown once, on the answer to the POST that made them.
// Every action is a row of the audit trail.

// merchantUsersMax bounds a merchant's console users (and so the list). It
// is counted before the insert, so two creates at the same instant may
// pass it by one; the list's LIMIT holds regardless.
const merchantUsersMax = 100

// userActions are the actions on one user.
var userActions = map[string]string{"disable": "user.disable", "enable": "user.enable", "password": "user.password_reset"}

type usersData struct {
	Users []merchantUser
	Roles []Role
	// Shown once, after a create or a reset: the login and its password.
	NewLogin, NewPassword string
	Created               bool
}

func (s *Server) users(w http.ResponseWriter, r *http.Request, sess *session) {
	s.renderUsers(w, r, sess, http.StatusOK, usersData{})
}

func (s *Server) renderUsers(w http.ResponseWriter, r *http.Request, sess *session, status int, d usersData) {
	us, err := s.store.merchantUsers(r.Context(), sess.user.MerchantID, s.now())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	d.Users, d.Roles = us, []Role{RoleAdmin, RoleFinance, RoleReadonly}
	s.render(w, r, status, "users", "Users", d)
}

// userCreate makes a user of the session's merchant with a password made
// here (CreateUser: the CLI's rules, argon2id).
func (s *Server) userCreate(w http.ResponseWriter, r *http.Request, sess *session) {
	login := strings.TrimSpace(r.PostFormValue("login"))
	role, ok := ParseRole(r.PostFormValue("role"))
	if !ok || !role.merchantRole() {
		// A role of the house is no merchant admin's to give: the form
		// offers none, so someone edited it.
		s.record(r, sess, "refused", 0, "user.create", clip(login, 64), "role "+clip(r.PostFormValue("role"), 32))
		s.fail(w, r, http.StatusBadRequest, "role: must be admin, finance or readonly")
		return
	}
	if !loginRE.MatchString(login) {
		s.fail(w, r, http.StatusBadRequest, "login: must be 3 to 64 of a-z 0-9 . _ @ -, starting with a letter or digit")
		return
	}
	ctx := r.Context()
	n, err := s.store.countMerchantUsers(ctx, sess.user.MerchantID)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if n >= merchantUsersMax {
		s.fail(w, r, http.StatusConflict, "A merchant has at most "+strconv.Itoa(merchantUsersMax)+" console users; disable or reuse one.")
		return
	}
	pw, err := newPassword()
	if err != nil {
		s.internal(w, r, err)
		return
	}
	// The merchant is the session's: a merchant field added to the form
	// is never read.
	if _, err := CreateUser(ctx, s.cfg.DB, nil, NewUser{Login: login, Role: role, MerchantID: sess.user.MerchantID, Password: pw}); err != nil {
		if postings.ErrorCode(err) == postings.ECONFLICT {
			s.record(r, sess, "failed", 0, "user.create", login, "login taken")
		}
		s.domainError(w, r, err)
		return
	}
	s.record(r, sess, "ok", 0, "user.create", login, "role "+string(role))
	s.renderUsers(w, r, sess, http.StatusOK, usersData{NewLogin: login, NewPassword: pw, Created: true})
}

// userAction disables, enables or resets the password of one of the
// merchant's users. An admin cannot do either to themselves: that keeps
// one admin able to sign in, and a reset of one's own password here would
// end the session doing it.
func (s *Server) userAction(w http.ResponseWriter, r *http.Request, sess *session) {
	action, ok := userActions[r.PathValue("action")]
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if !ok || err != nil || id <= 0 {
		s.notFound(w, r)
		return
	}
	ctx := r.Context()
	u, err := s.store.merchantUser(ctx, sess.user.MerchantID, id, s.now())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if u == nil { // unknown, or another merchant's: the same answer
		s.notFound(w, r)
		return
	}
	if u.ID == sess.user.ID {
		s.record(r, sess, "refused", 0, action, u.Login, "on oneself")
		s.fail(w, r, http.StatusConflict, "You cannot disable yourself or reset your own password here; ask another admin of your merchant.")
		return
	}
	var d usersData
	switch r.PathValue("action") {
	case "disable", "enable":
		err = s.store.setUserDisabled(ctx, sess.user.MerchantID, id, r.PathValue("action") == "disable")
	case "password":
		var pw, hash string
		if pw, err = newPassword(); err == nil {
			if hash, err = HashPassword(pw); err == nil {
				err = s.store.setUserPassword(ctx, sess.user.MerchantID, id, hash)
			}
		}
		d.NewLogin, d.NewPassword = u.Login, pw
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	s.record(r, sess, "ok", 0, action, u.Login, "")
	if d.NewPassword == "" {
		http.Redirect(w, r, "/users", http.StatusSeeOther)
		return
	}
	s.renderUsers(w, r, sess, http.StatusOK, d)
}

// newPassword is 20 random base32 letters and digits, 100 bits: within the
// password rules, and typeable from the screen.
func newPassword() (string, error) {
	var b [15]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	pw := strings.ToLower(base32.StdEncoding.EncodeToString(b[:])) // 24 characters, no padding
	return pw[:20], CheckPasswordRules(pw[:20])
}
