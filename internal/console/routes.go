package console

import "net/http"

// routes lists every page with the permission it needs: the role check is
// here, once per route, and nowhere left to a template.
func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("GET /static/", s.serveStatic)
	m.HandleFunc("GET /login", s.loginPage)
	m.HandleFunc("POST /login", s.login)
	m.HandleFunc("POST /logout", s.guard(permSignedIn, s.logout))
	m.HandleFunc("GET /{$}", s.guard(permSignedIn, func(w http.ResponseWriter, r *http.Request, sess *session) {
		http.Redirect(w, r, homeOf(sess.user), http.StatusSeeOther)
	}))

	m.HandleFunc("GET /balances", s.guard(permMerchantRead, s.balances))
	m.HandleFunc("GET /cards", s.guard(permMerchantRead, s.cardList))
	m.HandleFunc("GET /cards/{cardNo}", s.guard(permMerchantRead, s.card))
	m.HandleFunc("GET /cards/{cardNo}/{action}", s.guard(permCardWrite, s.confirmCard))
	m.HandleFunc("POST /cards/{cardNo}/{action}", s.guard(permCardWrite, s.cardAction))
	m.HandleFunc("GET /bill", s.guard(permMerchantRead, s.bill))
	m.HandleFunc("GET /bill.csv", s.guard(permMerchantRead, s.billCSV))
	m.HandleFunc("GET /events", s.guard(permMerchantRead, s.events))
	m.HandleFunc("POST /events/{eventID}/replay", s.guard(permReplay, s.replay))
	m.HandleFunc("GET /events/{eventID}", s.guard(permMerchantRead, s.event))
	m.HandleFunc("GET /webhooks/endpoints", s.guard(permMerchantRead, s.webhookEndpoints))
	m.HandleFunc("GET /statement", s.guard(permMerchantRead, s.statement))
	m.HandleFunc("GET /remittances", s.guard(permMerchantRead, s.remittances))
	m.HandleFunc("GET /remittances/{txId}", s.guard(permMerchantRead, s.remittance))
	m.HandleFunc("GET /users", s.guard(permUsers, s.users))
	m.HandleFunc("POST /users", s.guard(permUsers, s.userCreate))
	m.HandleFunc("POST /users/{id}/{action}", s.guard(permUsers, s.userAction))

	// The actions' URLs opened with GET go back to their page (backto.go).
	m.HandleFunc("GET /users/{id}/{action}", s.guard(permUsers, backTo(usersPagePath)))
	m.HandleFunc("GET /events/{eventID}/replay", s.guard(permReplay, backTo(eventPagePath)))
	m.HandleFunc("GET /house/users", s.guard(permHouseUsers, s.houseUserList))
	m.HandleFunc("POST /house/users", s.guard(permHouseUsers, s.houseUserCreate))
	m.HandleFunc("POST /house/users/{id}/{action}", s.guard(permHouseUsers, s.houseUserAction))
	m.HandleFunc("GET /house/users/{id}/{action}", s.guard(permHouseUsers, backTo(houseUsersPagePath)))
	m.HandleFunc("GET /account", s.guard(permSignedIn, s.account))
	m.HandleFunc("POST /account/password", s.guard(permSignedIn, s.accountPassword))
	m.HandleFunc("GET /account/password", s.guard(permSignedIn, backTo(accountPagePath)))

	m.HandleFunc("GET /audit/trail", s.guard(permAudit, s.trail))
	m.HandleFunc("GET "+auditStatementPath, s.guard(permAudit, s.auditStatement))

	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if sess, err := s.loadSession(r); err == nil && sess != nil {
			r = r.WithContext(withSession(r.Context(), sess))
		}
		s.notFound(w, r)
	})
}
