package console

import "net/http"

// An operator manages the house's console users (users_admin.go), which
// before came only from `gateway console user create`: lists the
// operators and auditors, creates one through the CLI's CreateUser (the
// password made here, the TOTP secret and its otpauth URI made by
// CreateUser, all shown once), disables and enables one, and resets a
// password. Merchant roles are refused (a merchant's users are its
// admin's, on /users), as is an action of an operator on themselves;
// merchants' users are unknown here. Only operators reach it (permHouseUsers):
// an auditor reads, and a merchant's user is not the house's.

// houseUsersMax bounds the house's console users, as merchantUsersMax a
// merchant's.
const houseUsersMax = 100

var houseUsers = &userDirectory{
	path: "/house/users", title: "House users",
	roles:    []Role{RoleOperator, RoleAuditor},
	usersMax: houseUsersMax, userLabel: "house users",
	scope:    func(*session) int64 { return 0 },
	rolesMsg: "role: must be operator or auditor (a merchant's users are made by its admin)",
	selfMsg:  "You cannot disable yourself or reset your own password here; ask another operator (your own password: Account).",
	note: "At most 100 users. Operators run the house's pages and manage these users; auditors read the journal, verify and the audit trail. " +
		"Both sign in with a TOTP code: a new user's secret is shown once, at creation; a reset makes a new password and keeps the secret. " +
		"A disabled user's sessions end at once; a reset password ends them too and lifts a lockout. " +
		"You cannot disable yourself or reset your own password here.",
}

func (s *Server) houseUserList(w http.ResponseWriter, r *http.Request, sess *session) {
	s.renderDirectory(w, r, sess, houseUsers, http.StatusOK, usersData{})
}

func (s *Server) houseUserCreate(w http.ResponseWriter, r *http.Request, sess *session) {
	s.directoryCreate(w, r, sess, houseUsers)
}

func (s *Server) houseUserAction(w http.ResponseWriter, r *http.Request, sess *session) {
	s.directoryAction(w, r, sess, houseUsers)
}

func houseUsersPagePath(*http.Request) string { return houseUsers.path }
