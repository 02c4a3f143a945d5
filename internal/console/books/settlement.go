package books

import (
	"mime/multipart"
	"net/http"

	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/reconcile"
)

// Settlement reconciliation from the page: the auditor uploads the card
// network's settlement file and sees what the CLI's reconcile settlement
// prints (reconcile.Settlement, the same function, recording in the same
// reconciliation records): the period, the totals per currency, the
// counts per category, each row or clearing to act on, what was recorded
// and the verdict, with the CLI's exit status. The period is the file's
// "# period:" line or the form's days for a file without one.

// settlementPath is the page; its POST takes a file (Register's bound).
const settlementPath = "/audit/settlement"

type settlementData struct {
	File   string
	Report *reconcile.SettlementReport
	Items  []reconcile.SettlementItem
	Hidden int64 // items of the report not listed on the page
	// Verdict is the CLI's last line and exit status: the report's, or
	// UNUSABLE for a file that cannot be reconciled.
	Verdict *reconcile.Verdict
}

// settlement reconciles the uploaded file, as gateway reconcile settlement
// FILE.csv does.
func (s *pages) settlement(w http.ResponseWriter, r *http.Request, u *host.User) {
	s.reconcile(w, r, u, uploadPage{page: "settlement", title: "Settlement reconciliation", action: "settlement.reconcile",
		fileMissing: "file: choose the settlement file (CSV: message_id,auth_id,amount,currency,date)", empty: settlementData{},
		run: func(f multipart.File, name string, period reconcile.Period, actor string) (uploadResult, error) {
			rep, err := reconcile.Settlement(r.Context(), s.d.Settlements, reconcile.NewRecords(s.d.DB),
				reconcile.SettlementInput{File: f, Name: name, Period: period, Actor: actor})
			if err != nil {
				return uploadResult{}, err
			}
			return uploadResult{rows: rep.Rows, matched: rep.Counts.Matched, toAct: rep.Counts.ToAct(), verdict: rep.Verdict, report: rep}, nil
		},
		show: func(name string, res uploadResult, v reconcile.Verdict) any {
			d := settlementData{File: name, Verdict: &v}
			if rep, ok := res.report.(*reconcile.SettlementReport); ok {
				d.Report = rep
				d.Items, d.Hidden = shownItems(rep.Items, rep.ItemsOmitted)
			}
			return d
		}})
}
