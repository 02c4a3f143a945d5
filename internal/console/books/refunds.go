package books

import (
	"errors"
	"mime/multipart"
	"net/http"

	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/reconcile"
)

// The card network's refund file from the page (docs/finance.md, "Refund
// reconciliation"): what `gateway reconcile refunds` does (reconcile.Refunds,
// the same records, kind network_refund), for operators and auditors.

// refundReportPath is the page; its POST takes a file (Register's bound).
const refundReportPath = "/audit/refunds"

type refundReportData struct {
	File    string
	Report  *reconcile.RefundReport
	Items   []reconcile.RefundItem
	Hidden  int64
	Verdict *reconcile.Verdict
}

func (s *pages) refundReport(w http.ResponseWriter, r *http.Request, u *host.User) {
	run := func(f multipart.File, name string, period reconcile.Period, actor string) (uploadResult, error) {
		if s.d.Refunds == nil {
			return uploadResult{}, errNoRefundSource
		}
		rep, err := reconcile.Refunds(r.Context(), s.d.Refunds, reconcile.NewRecords(s.d.DB), reconcile.RefundInput{
			File: f, Name: name, Period: period, Actor: actor})
		if err != nil {
			return uploadResult{}, err
		}
		return uploadResult{rows: rep.Rows, matched: rep.Counts.Matched, toAct: rep.Counts.ToAct(), verdict: rep.Verdict, report: rep}, nil
	}
	show := func(name string, res uploadResult, v reconcile.Verdict) any {
		d := refundReportData{File: name, Verdict: &v}
		if rep, ok := res.report.(*reconcile.RefundReport); ok {
			d.Report = rep
			d.Items, d.Hidden = shownItems(rep.Items, rep.ItemsOmitted)
		}
		return d
	}
	s.reconcile(w, r, u, uploadPage{page: "refund_report", title: "Refund file reconciliation", action: "refunds.reconcile",
		fileMissing: fileMissing, empty: refundReportData{}, run: run, show: show})
}

// errNoRefundSource: a console built without the network's refund reads.
var errNoRefundSource = errors.New("console: no refund source configured")
