package console

import (
	"github.com/paygate/gateway/internal/console/host"

	"mime/multipart"
	"net/http"
	"strconv"

	"github.com/paygate/gateway/reconcile"
)

// A reconciliation file uploaded from a page (the bank statement, the
// rail's report): GET shows the form, POST reconciles the file with the
// CLI's function and shows its report, verdict and exit status; each
// upload is a row of the audit trail. One route per page serves both, so
// that the shared route table grows by one line per page.

// reconcileUpload serves a reconciliation page: run reconciles the file
// (reading the page's own fields from the request it closes over); show
// turns the report (nil for an unusable file) and its
// verdict into the page's data.
func (s *Server) reconcileUpload(w http.ResponseWriter, r *http.Request, sess *session, page, title, action string,
	empty any, run func(f multipart.File, name string, period reconcile.Period, actor string) (uploadResult, error),
	show func(name string, res uploadResult, v reconcile.Verdict) any) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		s.render(w, r, http.StatusOK, page, title, empty)
		return
	case http.MethodPost:
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		s.fail(w, r, http.StatusMethodNotAllowed, "This page takes GET and POST.")
		return
	}
	f, hdr, err := r.FormFile("file")
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "file: choose the file to reconcile (CSV)")
		return
	}
	defer f.Close()
	var period reconcile.Period
	if from, to := r.FormValue("from"), r.FormValue("to"); from != "" || to != "" {
		if period, err = reconcile.NewPeriod("from", from, "to", to); err != nil {
			s.domainError(w, r, err)
			return
		}
	}
	name := host.SafeValue(hdr.Filename, host.AuditTargetMax)
	res, err := run(f, name, period, "console:"+sess.user.Login)
	switch {
	case reconcile.IsUnusable(err):
		v := reconcile.UnusableVerdict(err)
		s.record(r, sess, "failed", res.merchant, action, name, clip(v.Line(), 500))
		s.render(w, r, http.StatusBadRequest, page, title, show(name, uploadResult{merchant: res.merchant}, v))
		return
	case err != nil:
		s.domainError(w, r, err)
		return
	}
	outcome := map[bool]string{true: "ok", false: "failed"}[res.verdict.Status == reconcile.ExitMatched]
	s.record(r, sess, outcome, res.merchant, action, name, strconv.FormatInt(res.rows, 10)+" rows, "+
		strconv.FormatInt(res.matched, 10)+" matched, "+strconv.FormatInt(res.toAct, 10)+" to act on; "+res.verdict.Word)
	s.render(w, r, http.StatusOK, page, title, show(name, res, res.verdict))
}

// uploadResult is a reconciliation as the page and the audit trail need it.
type uploadResult struct {
	merchant             int64 // the merchant the file is about, 0 for the house's files
	rows, matched, toAct int64
	verdict              reconcile.Verdict
	report               any
}
