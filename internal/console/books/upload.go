package books

import (
	"mime/multipart"
	"net/http"
	"strconv"

	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/reconcile"
)

// The four reconciliation pages (the card network's settlement and refund
// files, the bank statement, the rail's report) are one handler,
// reconcile: GET shows the form, POST reconciles the uploaded file with the
// CLI's function and shows its report, verdict and exit status; each upload
// is a row of the audit trail under the page's action. A page says only
// what differs: its template, its action's name, what it reconciles and how
// its report is shown (settlement.go, bank.go, rail.go, refunds.go). So the
// four answer a missing file, a bad period, an unusable file and a report
// alike, and record alike.

const (
	// uploadMax bounds the file from a page (about 100,000 rows); a bigger
	// one is the CLI's, which streams a million.
	uploadMax = 8 << 20
	// shownMax bounds the items a page lists; the counts include the rest.
	shownMax = 1000
)

// uploadPage is one reconciliation page.
type uploadPage struct {
	page, title string
	action      string // the audit trail's action
	fileMissing string // the refusal of a POST without its file, naming the field
	empty       any    // the page's data before any upload
	// run reconciles the file, reading the page's own fields from the
	// request it closes over.
	run func(f multipart.File, name string, period reconcile.Period, actor string) (uploadResult, error)
	// show turns the report (nil for an unusable file) and its verdict
	// into the page's data.
	show func(name string, res uploadResult, v reconcile.Verdict) any
}

// uploadResult is a reconciliation as the page and the audit trail need it.
type uploadResult struct {
	merchant             int64 // the merchant the file is about, 0 for the house's files
	rows, matched, toAct int64
	verdict              reconcile.Verdict
	report               any
}

// reconcile serves a reconciliation page.
func (s *pages) reconcile(w http.ResponseWriter, r *http.Request, u *host.User, p uploadPage) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		s.h.Render(w, r, http.StatusOK, p.page, p.title, p.empty)
		return
	case http.MethodPost:
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		s.h.Fail(w, r, http.StatusMethodNotAllowed, "This page takes GET and POST.")
		return
	}
	f, hdr, err := r.FormFile("file")
	if err != nil {
		s.h.Fail(w, r, http.StatusBadRequest, p.fileMissing)
		return
	}
	defer f.Close()
	var period reconcile.Period
	if from, to := r.FormValue("from"), r.FormValue("to"); from != "" || to != "" {
		if period, err = reconcile.NewPeriod("from", from, "to", to); err != nil {
			s.h.DomainError(w, r, err)
			return
		}
	}
	name := host.SafeValue(hdr.Filename, host.AuditTargetMax) // what was sent, never dropped (internal/console/audit_trail.go)
	res, err := p.run(f, name, period, "console:"+u.Login)
	switch {
	case reconcile.IsUnusable(err):
		v := reconcile.UnusableVerdict(err)
		s.h.Record(r, "failed", res.merchant, p.action, name, host.Clip(v.Line(), 500))
		s.h.Render(w, r, http.StatusBadRequest, p.page, p.title, p.show(name, uploadResult{merchant: res.merchant}, v))
		return
	case err != nil:
		s.h.DomainError(w, r, err)
		return
	}
	outcome := map[bool]string{true: "ok", false: "failed"}[res.verdict.Status == reconcile.ExitMatched]
	s.h.Record(r, outcome, res.merchant, p.action, name, strconv.FormatInt(res.rows, 10)+" rows, "+
		strconv.FormatInt(res.matched, 10)+" matched, "+strconv.FormatInt(res.toAct, 10)+" to act on; "+res.verdict.Word)
	s.h.Render(w, r, http.StatusOK, p.page, p.title, p.show(name, res, res.verdict))
}

// shownItems is the items a page lists (at most shownMax) and how many it
// does not.
func shownItems[T any](items []T, omitted int64) ([]T, int64) {
	shown := items[:min(len(items), shownMax)]
	return shown, int64(len(items)-len(shown)) + omitted
}

// fileMissing is the refusal of a bank, rail or refund page's POST without
// a file.
const fileMissing = "file: choose the file to reconcile (CSV)"
