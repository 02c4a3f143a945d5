package console

import (
	"net/http"
	"strconv"
	"time"

	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
	"github.com/paygate/gateway/reconcile"
)

// A merchant's statement for the house (the CLI's `audit statement
// --shop-no`): the auditor, or the operator (who may run every auditor's
// page, as the CLI lets whoever holds the database URL run it), picks a
// merchant by shop number and a range of UTC days; the page runs
// reconcile.Statement, the CLI's function, and shows its report with the
// merchant's page's template. The CLI exits 1 on a mismatch; the page says
// MISMATCH and the audit row is `failed`.

// auditStatementPath is the page; a GET, since it changes nothing.
const auditStatementPath = "/audit/statement"

// statementDaysDefault is the range the page opens with, as the
// merchant's page.
const statementDaysDefault = 30

func (s *Server) auditStatement(w http.ResponseWriter, r *http.Request, sess *session) {
	q := r.URL.Query()
	shop := q.Get("shopNo")
	d := statementData{House: true, ShopNo: clip(shop, 64), StartText: clip(q.Get("startDate"), 10), EndText: clip(q.Get("endDate"), 10)}
	if len(q) == 0 {
		// The form alone, with the merchant page's default range.
		end := s.now().UTC().Truncate(24 * time.Hour)
		d.StartText, d.EndText = end.AddDate(0, 0, -(statementDaysDefault-1)).Format(postings.DayLayout), end.Format(postings.DayLayout)
		s.render(w, r, http.StatusOK, "statement", "Statement of a merchant", d)
		return
	}
	m, start, end, msg, err := s.auditStatementInput(r)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	if msg != "" {
		if host.HasControl(d.ShopNo) {
			d.ShopNo = ""
		}
		d.Error = msg
		s.render(w, r, http.StatusBadRequest, "statement", "Statement of a merchant", d)
		return
	}
	rep, err := reconcile.Statement(r.Context(), s.cfg.Audit, m.ID, start, end.AddDate(0, 0, 1))
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	rep.ShopNo = m.ShopNo
	d.ShopNo, d.Merchant, d.Report = m.ShopNo, m.Name, rep
	d.StartText, d.EndText = start.Format(postings.DayLayout), end.Format(postings.DayLayout)
	outcome, detail := "ok", d.StartText+" to "+d.EndText+": reconciles"
	if !rep.OK() {
		outcome, detail = "failed", d.StartText+" to "+d.EndText+": "+strconv.Itoa(rep.Mismatches)+" accounts mismatch"
	}
	s.record(r, sess, outcome, m.ID, "audit.statement", m.ShopNo, detail)
	s.render(w, r, http.StatusOK, "statement", "Statement of a merchant", d)
}

// auditStatementInput checks the shop number and the days, as the CLI
// checks --shop-no, --from and --to and the merchant's page its range (at
// most 366 days): msg names the field that is wrong. An unknown shop
// number is a refusal of the form, not the 404 page: the reader typed it.
// Any other error (the database) is err.
func (s *Server) auditStatementInput(r *http.Request) (m *merchant.Merchant, start, end time.Time, msg string, err error) {
	q := r.URL.Query()
	if len(q["shopNo"]) > 1 {
		return nil, start, end, "shopNo: appears more than once", nil
	}
	shop := q.Get("shopNo")
	if shop == "" {
		return nil, start, end, "shopNo: required, the merchant's shop number", nil
	}
	st, en, err := host.ParseDays(r, s.now(), statementDaysDefault)
	if err != nil {
		return nil, start, end, host.FieldMessage(err), nil
	}
	m, err = s.merchantOfQuery(r.Context(), shop)
	switch {
	case postings.ErrorCode(err) == postings.ENOTFOUND:
		return nil, start, end, "shopNo: no merchant has the shop number " + strconv.Quote(clip(shop, 64)), nil
	case postings.ErrorCode(err) == postings.EINVALID:
		return nil, start, end, host.FieldMessage(err), nil
	case err != nil:
		return nil, start, end, "", err
	}
	return m, st, en, "", nil
}
