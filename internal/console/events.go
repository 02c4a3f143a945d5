package console

import (
	"net/http"
	"regexp"

	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/postings"
	"github.com/paygate/gateway/reconcile"
)

// Webhook events with their delivery, and their replay through the
// delivery store (the CLI's `callbacks replay`); the statement of a range
// of days (the CLI's `audit statement`).

const eventsPageMax = 100

var (
	eventIDRE     = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)
	eventStatuses = map[string]bool{"": true, "PENDING": true, "DELIVERED": true, "FAILED": true, "NOT_SENT": true}
)

type eventsData struct {
	Status    string
	Events    []delivery.DeliveryInfo
	CanReplay bool
}

func (s *Server) events(w http.ResponseWriter, r *http.Request, sess *session) {
	status := r.URL.Query().Get("status")
	if !eventStatuses[status] {
		s.fail(w, r, http.StatusBadRequest, "status: must be PENDING, DELIVERED, FAILED or NOT_SENT")
		return
	}
	// ?order=asc|desc, the API's and the CLI's rule (delivery.ParseOrder);
	// newest first by default, as before.
	order, err := delivery.ParseOrder("order", r.URL.Query().Get("order"), delivery.OrderDesc)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "order: must be asc or desc")
		return
	}
	evs, err := s.cfg.Deliveries.DeliveriesInOrder(r.Context(), sess.user.MerchantID, status, order, eventsPageMax)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "events", "Webhook events", eventsData{Status: status, Events: evs,
		CanReplay: sess.user.Role.may(permReplay)})
}

func (s *Server) replay(w http.ResponseWriter, r *http.Request, sess *session) {
	id := r.PathValue("eventID")
	if !eventIDRE.MatchString(id) {
		s.notFound(w, r)
		return
	}
	a, ok := s.auditBegin(w, r, sess, 0, "event.replay", id, "") // audit_intent.go
	if !ok {
		return
	}
	_, err := s.cfg.Deliveries.ReplayEvent(r.Context(), sess.user.MerchantID, id)
	a.Finish(err, 0, "", "")
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	http.Redirect(w, r, "/events", http.StatusSeeOther)
}

// statementData is the statement page's, for a merchant's users and, with
// House, for the house's (audit_statement.go): one template, one report.
type statementData struct {
	StartText, EndText string // the days as typed, kept in the form
	Report             *reconcile.StatementReport
	// The house's page: the merchant picked by shop number, and a refusal
	// naming the field.
	House            bool
	ShopNo, Merchant string
	Error            string
}

func (s *Server) statement(w http.ResponseWriter, r *http.Request, sess *session) {
	start, end, err := host.ParseDays(r, s.now(), 30)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	rep, err := reconcile.Statement(r.Context(), s.cfg.Audit, sess.user.MerchantID, start, end.AddDate(0, 0, 1))
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	rep.ShopNo = sess.user.ShopNo
	s.render(w, r, http.StatusOK, "statement", "Statement", statementData{StartText: start.Format(postings.DayLayout),
		EndText: end.Format(postings.DayLayout), Report: rep})
}
