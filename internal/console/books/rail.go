package books

import (
	"mime/multipart"
	"net/http"

	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/reconcile"
)

// The rail's settlement report from the page (docs/finance.md, "Rail
// settlement report"): what `gateway reconcile rail` does (reconcile.Rail,
// the same records), for operators and auditors.

// railReportPath is the page; its POST takes a file (Register's bound).
const railReportPath = "/audit/rail"

func (s *pages) railReport(w http.ResponseWriter, r *http.Request, u *host.User) {
	s.reconcile(w, r, u, houseFile(uploadPage{page: "rail_report", title: "Rail report reconciliation", action: "rail.reconcile",
		fileMissing: fileMissing}, s.d.Rail != nil,
		func(f multipart.File, name string, period reconcile.Period, actor string) (*reconcile.RailReport, error) {
			return reconcile.Rail(r.Context(), s.d.Rail, reconcile.NewRecords(s.d.DB), reconcile.RailInput{
				File: f, Name: name, Period: period, Actor: actor})
		},
		func(rep *reconcile.RailReport) (uploadResult, []reconcile.RailItem, int64) {
			return uploadResult{rows: rep.Rows, matched: rep.Counts.Matched, toAct: rep.Counts.ToAct(), verdict: rep.Verdict},
				rep.Items, rep.ItemsOmitted
		}))
}
