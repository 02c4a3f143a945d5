package console

import (
	"crypto/rand"
	"encoding/base32"
	"net/http"
	"strings"

	"github.com/paygate/gateway/internal/console/auth"
)

// A merchant admin manages the merchant's console users (users_admin.go):
// lists them, creates one (admin, finance or read-only, of the admin's own
// merchant only), disables and enables one, and resets a password. The
// merchant is the session's and the role one of the three merchant roles,
// whatever the form says; a user of another merchant, or of the house, is
// answered as an unknown one.

// merchantUsersMax bounds a merchant's console users (and so the list). It
// is counted before the insert, so two creates at the same instant may
// pass it by one; the list's LIMIT holds regardless.
const merchantUsersMax = 100

var merchantUsers = &userDirectory{
	path: "/users", title: "Users",
	roles:    []Role{RoleAdmin, RoleFinance, RoleReadonly},
	usersMax: merchantUsersMax, userLabel: "console users of a merchant",
	scope:    func(sess *session) int64 { return sess.user.MerchantID },
	rolesMsg: "role: must be admin, finance or readonly",
	selfMsg:  "You cannot disable yourself or reset your own password here; ask another admin of your merchant (your own password: Account).",
	note: "At most 100 users. Admins manage users and take card actions; finance also replays webhooks; readonly reads. " +
		"A disabled user's sessions end at once; a reset password ends them too and lifts a lockout. " +
		"You cannot disable yourself or reset your own password here.",
}

func (s *Server) users(w http.ResponseWriter, r *http.Request, sess *session) {
	s.renderDirectory(w, r, sess, merchantUsers, http.StatusOK, usersData{})
}

func (s *Server) userCreate(w http.ResponseWriter, r *http.Request, sess *session) {
	s.directoryCreate(w, r, sess, merchantUsers)
}

func (s *Server) userAction(w http.ResponseWriter, r *http.Request, sess *session) {
	s.directoryAction(w, r, sess, merchantUsers)
}

// newPassword is 20 random base32 letters and digits, 100 bits: within the
// password rules, and typeable from the screen.
func newPassword() (string, error) {
	var b [15]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	pw := strings.ToLower(base32.StdEncoding.EncodeToString(b[:])) // 24 characters, no padding
	return pw[:20], auth.CheckPasswordRules(pw[:20])
}
