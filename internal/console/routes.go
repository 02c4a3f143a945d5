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
	m.HandleFunc("GET /reports/balance", s.guard(permMerchantRead, s.balanceReport))
	m.HandleFunc("GET /reports/balance.csv", s.guard(permMerchantRead, s.balanceReportCSV(false)))
	m.HandleFunc("GET /reports/balance-totals.csv", s.guard(permMerchantRead, s.balanceReportCSV(true)))
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

	m.HandleFunc("GET /operator/merchants", s.guard(permOperate, s.merchantList))
	m.HandleFunc("POST /operator/merchants", s.guard(permOperate, s.merchantCreate))
	m.HandleFunc("POST /operator/merchants/{shopNo}/{action}", s.guard(permOperate, s.merchantStatus))
	m.HandleFunc("GET /operator/rates", s.guard(permOperate, s.rates))
	m.HandleFunc("POST /operator/rates", s.guard(permOperate, s.rateSet))
	m.HandleFunc("GET /operator/stuck", s.guard(permOperate, s.stuck))
	m.HandleFunc("GET /operator/merchants/{shopNo}", s.guard(permOperate, s.merchantPage))
	m.HandleFunc("POST /operator/merchants/{shopNo}/whitelist", s.guard(permOperate, s.merchantWhitelist))
	m.HandleFunc("POST /operator/merchants/{shopNo}/kyb", s.guard(permOperate, s.merchantKYB))
	m.HandleFunc("POST /operator/merchants/{shopNo}/limits", s.guard(permOperate, s.merchantLimits))
	m.HandleFunc("POST /operator/merchants/{shopNo}/bins", s.guard(permOperate, s.merchantBINAccess))
	m.HandleFunc("POST /operator/merchants/{shopNo}/callback-url", s.guard(permOperate, s.merchantCallbackURL))
	m.HandleFunc("POST /operator/merchants/{shopNo}/deposit", s.guard(permOperate, s.depositConfirm))
	m.HandleFunc("POST /operator/merchants/{shopNo}/deposit/confirm", s.guard(permOperate, s.deposit))
	m.HandleFunc("POST /operator/merchants/{shopNo}/roll-key", s.guard(permOperate, s.rollKey))
	// The actions' URLs opened with GET go back to their page (backto.go).
	m.HandleFunc("GET /operator/merchants/{shopNo}/{action}", s.guard(permOperate, backTo(merchantPagePath)))
	m.HandleFunc("GET /operator/merchants/{shopNo}/deposit/confirm", s.guard(permOperate, backTo(merchantPagePath)))
	m.HandleFunc("GET /users/{id}/{action}", s.guard(permUsers, backTo(usersPagePath)))
	m.HandleFunc("GET /events/{eventID}/replay", s.guard(permReplay, backTo(eventPagePath)))
	m.HandleFunc("GET /operator/holds", s.guard(permOperate, s.holds))
	m.HandleFunc("GET /operator/bins", s.guard(permOperate, s.bins))
	m.HandleFunc("POST /operator/bins", s.guard(permOperate, s.binUpsert))
	m.HandleFunc("GET /house/users", s.guard(permHouseUsers, s.houseUserList))
	m.HandleFunc("POST /house/users", s.guard(permHouseUsers, s.houseUserCreate))
	m.HandleFunc("POST /house/users/{id}/{action}", s.guard(permHouseUsers, s.houseUserAction))
	m.HandleFunc("GET /house/users/{id}/{action}", s.guard(permHouseUsers, backTo(houseUsersPagePath)))
	m.HandleFunc("GET /account", s.guard(permSignedIn, s.account))
	m.HandleFunc("POST /account/password", s.guard(permSignedIn, s.accountPassword))
	m.HandleFunc("GET /account/password", s.guard(permSignedIn, backTo(accountPagePath)))

	m.HandleFunc("GET /audit/journal", s.guard(permAudit, s.journal))
	m.HandleFunc("GET /audit/journal/{shopNo}/{seq}", s.guard(permAudit, s.entry))
	m.HandleFunc("GET /audit/verify", s.guard(permAudit, s.verifyPage))
	m.HandleFunc("POST /audit/verify", s.guard(permAudit, s.verify))
	m.HandleFunc("GET /audit/verify/{id}", s.guard(permAudit, s.verifyRunPage))
	m.HandleFunc("GET "+settlementPath, s.guard(permAudit, s.settlementPage))
	m.HandleFunc("POST "+settlementPath, s.guard(permAudit, s.settlement))
	m.HandleFunc(bankStatementPath, s.guard(permAudit, s.bankStatement)) // GET the form, POST the statement (audit_bank.go)
	m.HandleFunc(railReportPath, s.guard(permAudit, s.railReport))       // GET the form, POST the report (audit_rail.go)
	m.HandleFunc("GET /audit/trail", s.guard(permAudit, s.trail))
	m.HandleFunc("GET "+auditStatementPath, s.guard(permAudit, s.auditStatement))
	m.HandleFunc("GET /audit/checkpoints", s.guard(permAudit, s.checkpoints)) // books.go
	m.HandleFunc("GET /audit/checkpoints/{id}/file", s.guard(permAudit, s.checkpointFile))
	m.HandleFunc("GET /closes", s.guard(permCloses, s.closes))
	m.HandleFunc("GET "+adjustmentsPath, s.guard(permAudit, s.adjustments)) // house_adjustments.go
	m.HandleFunc("POST "+adjustmentsPath, s.guard(permOperate, s.adjustmentPropose))
	m.HandleFunc("POST "+adjustmentsPath+"/{id}/{decision}", s.guard(permOperate, s.adjustmentDecide))
	m.HandleFunc("GET "+adjustmentsPath+"/{id}/{decision}", s.guard(permOperate, backTo(func(*http.Request) string { return adjustmentsPath })))
	m.HandleFunc("GET "+sanctionsPath, s.guard(permOperate, s.sanctionsPage))
	m.HandleFunc("POST "+sanctionsPath, s.guard(permOperate, s.sanctionsUpload))
	m.HandleFunc("POST "+sanctionsConfirmPath, s.guard(permOperate, s.sanctionsConfirm))
	m.HandleFunc("GET "+sanctionsConfirmPath, s.guard(permOperate, backTo(func(*http.Request) string { return sanctionsPath })))

	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if sess, err := s.loadSession(r); err == nil && sess != nil {
			r = r.WithContext(withSession(r.Context(), sess))
		}
		s.notFound(w, r)
	})
}
