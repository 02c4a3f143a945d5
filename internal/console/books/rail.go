package books

import (
	"errors"
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

type railReportData struct {
	File    string
	Report  *reconcile.RailReport
	Items   []reconcile.RailItem
	Hidden  int64
	Verdict *reconcile.Verdict
}

func (s *pages) railReport(w http.ResponseWriter, r *http.Request, u *host.User) {
	run := func(f multipart.File, name string, period reconcile.Period, actor string) (uploadResult, error) {
		if s.d.Rail == nil {
			return uploadResult{}, errNoRailSource
		}
		rep, err := reconcile.Rail(r.Context(), s.d.Rail, reconcile.NewRecords(s.d.DB), reconcile.RailInput{
			File: f, Name: name, Period: period, Actor: actor})
		if err != nil {
			return uploadResult{}, err
		}
		return uploadResult{rows: rep.Rows, matched: rep.Counts.Matched, toAct: rep.Counts.ToAct(), verdict: rep.Verdict, report: rep}, nil
	}
	show := func(name string, res uploadResult, v reconcile.Verdict) any {
		d := railReportData{File: name, Verdict: &v}
		if rep, ok := res.report.(*reconcile.RailReport); ok {
			d.Report = rep
			d.Items, d.Hidden = shownItems(rep.Items, rep.ItemsOmitted)
		}
		return d
	}
	s.reconcile(w, r, u, uploadPage{page: "rail_report", title: "Rail report reconciliation", action: "rail.reconcile",
		fileMissing: fileMissing, empty: railReportData{}, run: run, show: show})
}

// errNoRailSource: a console built without the remittances' reads.
var errNoRailSource = errors.New("console: no rail source configured")
