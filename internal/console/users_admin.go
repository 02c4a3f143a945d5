package console

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/console/auth"
	"github.com/paygate/gateway/internal/console/store"
)

// One set of handlers serves both pages that manage console users: a
// merchant admin's /users (the merchant's admin, finance and readonly
// users, merchant_users.go) and an operator's /house/users (the house's
// operators and auditors, house_users.go). A userDirectory says which: the
// scope the session manages, the roles it may give, its URL. Both list the
// users, create one through CreateUser (the CLI's rules and argon2id hash)
// with a password made here and shown once, disable, enable and reset a
// password (shown once); nobody does either of the last two to themselves;
// every action is a row of the audit trail.

type userDirectory struct {
	path, title string
	roles       []Role // the roles the page gives; any other is a 400
	usersMax    int    // counted before a create; the list's LIMIT too
	// scope is the merchant whose users the session manages, 0 for the
	// house's: taken from the session, never from the form.
	scope     func(*session) int64
	rolesMsg  string // the 400 for another role
	selfMsg   string // the 409 for an action on oneself
	note      string // under the list
	userLabel string // "console users" in the bound's message
}

func (d *userDirectory) gives(r Role) bool {
	for _, x := range d.roles {
		if x == r {
			return true
		}
	}
	return false
}

// userActions are the actions on one user.
var userActions = map[string]string{"disable": "user.disable", "enable": "user.enable", "password": "user.password_reset"}

// stepUpActions are those that give lasting power back or anew (a user
// who can sign in again; a password the actor learns), so they ask for the
// actor's password again (stepup.go). Disabling takes power away: a stolen
// session doing it harms no more than it could by other means, and asking
// would slow down the response to a leak.
var stepUpActions = map[string]bool{"enable": true, "password": true}

type usersData struct {
	Path  string // the page's URL, the forms' base
	Note  string
	Users []listedUser
	Roles []Role
	// Shown once, after a create or a reset: the login and its password,
	// and for a new house user the TOTP secret and its otpauth URI.
	NewLogin, NewPassword string
	TOTPSecret, TOTPURI   string
	Created               bool
	// The create form's confirmation (step-up): the TOTP field for the
	// roles that have one, and a refusal naming the field.
	NeedsTOTP bool
	Error     string
}

func (s *Server) renderDirectory(w http.ResponseWriter, r *http.Request, sess *session, dir *userDirectory, status int, d usersData) {
	us, err := s.store.ScopedUsers(r.Context(), dir.scope(sess), s.now(), dir.usersMax)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	d.Path, d.Note, d.Users, d.Roles = dir.path, dir.note, us, dir.roles
	d.NeedsTOTP = sess.user.Role.needsTOTP()
	s.render(w, r, status, "users", dir.title, d)
}

// directoryCreate makes a user in the session's scope with a password made
// here (CreateUser: the CLI's rules, argon2id; a TOTP secret for a house
// role).
func (s *Server) directoryCreate(w http.ResponseWriter, r *http.Request, sess *session, dir *userDirectory) {
	login := strings.TrimSpace(r.PostFormValue("login"))
	role, ok := ParseRole(r.PostFormValue("role"))
	if !ok || !dir.gives(role) {
		// The form offers none other, so someone edited it.
		s.record(r, sess, "refused", 0, "user.create", clip(login, 64), "role "+clip(r.PostFormValue("role"), 32))
		s.fail(w, r, http.StatusBadRequest, dir.rolesMsg)
		return
	}
	if !loginRE.MatchString(login) {
		s.fail(w, r, http.StatusBadRequest, "login: must be 3 to 64 of a-z 0-9 . _ @ -, starting with a letter or digit")
		return
	}
	ctx := r.Context()
	scope := dir.scope(sess)
	n, err := s.store.CountScopedUsers(ctx, scope)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if n >= dir.usersMax {
		s.fail(w, r, http.StatusConflict, "There are at most "+strconv.Itoa(dir.usersMax)+" "+dir.userLabel+"; disable or reuse one.")
		return
	}
	// Lasting power: the acting user's password (and code) again, checked
	// as a login is (stepup.go), once the form itself is known good.
	if !s.stepUp(w, r, sess, "user.create", func(status int, msg string) {
		s.renderDirectory(w, r, sess, dir, status, usersData{Error: msg})
	}) {
		return
	}
	pw, err := newPassword()
	if err != nil {
		s.internal(w, r, err)
		return
	}
	// The scope is the session's: a merchant field added to the form is
	// never read. The user and its row are one transaction (audit_atomic.go).
	var c *Created
	create := func(tx bun.IDB) (err error) {
		c, err = CreateUser(ctx, tx, s.cfg.Sealer, NewUser{Login: login, Role: role, MerchantID: scope, Password: pw})
		return err
	}
	if !s.atomicAction(w, r, sess, "user.create", login, "role "+string(role), create, func(err error) { s.domainError(w, r, err) }) {
		return
	}
	s.renderDirectory(w, r, sess, dir, http.StatusOK, usersData{NewLogin: login, NewPassword: pw, Created: true,
		TOTPSecret: c.TOTPSecret, TOTPURI: c.TOTPURI})
}

// directoryAction disables, enables or resets the password of a user in
// the session's scope. Nobody does either to themselves: that keeps one
// admin (one operator) able to sign in, and a reset of one's own password
// here would end the session doing it (/account changes one's own).
func (s *Server) directoryAction(w http.ResponseWriter, r *http.Request, sess *session, dir *userDirectory) {
	action, ok := userActions[r.PathValue("action")]
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if !ok || err != nil || id <= 0 {
		s.notFound(w, r)
		return
	}
	ctx := r.Context()
	scope := dir.scope(sess)
	u, err := s.store.ScopedUser(ctx, scope, id, s.now())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if u == nil { // unknown, or outside the scope: the same answer
		s.notFound(w, r)
		return
	}
	if u.ID == sess.user.ID {
		s.record(r, sess, "refused", 0, action, u.Login, "on oneself")
		s.fail(w, r, http.StatusConflict, dir.selfMsg)
		return
	}
	if stepUpActions[r.PathValue("action")] && !s.confirmAction(w, r, sess, dir, u, action) {
		return
	}
	var d usersData
	var change func(bun.IDB) error
	switch r.PathValue("action") {
	case "disable", "enable":
		off := r.PathValue("action") == "disable"
		change = func(tx bun.IDB) error { return store.SetUserDisabled(ctx, tx, scope, id, off) }
	case "password":
		pw, err := newPassword()
		var hash string
		if err == nil {
			hash, err = auth.HashPassword(pw)
		}
		if err != nil {
			s.internal(w, r, err)
			return
		}
		change = func(tx bun.IDB) error { return store.SetUserPassword(ctx, tx, scope, id, hash) }
		d.NewLogin, d.NewPassword = u.Login, pw
	}
	// The change and its row are one transaction (audit_atomic.go).
	if !s.atomicAction(w, r, sess, action, u.Login, "", change, func(err error) { s.domainError(w, r, err) }) {
		return
	}
	if d.NewPassword == "" {
		http.Redirect(w, r, dir.path, http.StatusSeeOther)
		return
	}
	s.renderDirectory(w, r, sess, dir, http.StatusOK, d)
}

type confirmData struct {
	Path, Action, Login string // the action's URL, what it does, to whom
	NeedsTOTP           bool
	Error               string
}

// confirmAction asks for the actor's password (and code) before a
// step-up action: the list's button brings the action without it, and the
// answer is a page that asks for it (nothing done, nothing counted); the
// page's form brings it, and the check is the login's. True when the
// action may go on.
func (s *Server) confirmAction(w http.ResponseWriter, r *http.Request, sess *session, dir *userDirectory, u *listedUser, action string) bool {
	d := confirmData{Path: dir.path + "/" + strconv.FormatInt(u.ID, 10) + "/" + r.PathValue("action"),
		Action: r.PathValue("action"), Login: u.Login, NeedsTOTP: sess.user.Role.needsTOTP()}
	show := func(status int, msg string) {
		d.Error = msg
		s.render(w, r, status, "stepup", "Confirm with your password", d)
	}
	if _, asked := r.PostForm["currentPassword"]; !asked {
		show(http.StatusOK, "")
		return false
	}
	return s.stepUp(w, r, sess, action, show)
}
