package books

import (
	"mime/multipart"
	"net/http"

	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/reconcile"
)

// The card network's refund file from the page (docs/finance.md, "Refund
// reconciliation"): what `gateway reconcile refunds` does
// (reconcile.Refunds, the same records, kind network_refund), for
// operators and auditors.

// refundReportPath is the page; its POST takes a file (Register's bound).
const refundReportPath = "/audit/refunds"

func (s *pages) refundReport(w http.ResponseWriter, r *http.Request, u *host.User) {
	s.reconcile(w, r, u, houseFile(uploadPage{page: "refund_report", title: "Refund file reconciliation", action: "refunds.reconcile",
		fileMissing: fileMissing}, s.d.Refunds != nil,
		func(f multipart.File, name string, period reconcile.Period, actor string) (*reconcile.RefundReport, error) {
			return reconcile.Refunds(r.Context(), s.d.Refunds, reconcile.NewRecords(s.d.DB), reconcile.RefundInput{
				File: f, Name: name, Period: period, Actor: actor})
		},
		func(rep *reconcile.RefundReport) (uploadResult, []reconcile.RefundItem, int64) {
			return uploadResult{rows: rep.Rows, matched: rep.Counts.Matched, toAct: rep.Counts.ToAct(), verdict: rep.Verdict},
				rep.Items, rep.ItemsOmitted
		}))
}
