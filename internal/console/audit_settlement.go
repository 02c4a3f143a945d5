package console

import (
	"github.com/paygate/gateway/internal/console/host"

	"net/http"
	"strconv"

	"github.com/paygate/gateway/reconcile"
)

// Settlement reconciliation from the page: the auditor uploads the card
// network's settlement file and sees what the CLI's reconcile settlement
// prints (reconcile.Settlement, the same function, recording in the same
// reconciliation records): the period, the totals per currency, the
// counts per category, each row or clearing to act on, what was recorded
// and the verdict, with the CLI's exit status. The period is the file's
// "# period:" line or the form's days for a file without one.

const (
	// settlementPath is the page; its POST takes a bigger body than a form.
	settlementPath = "/audit/settlement"
	// settlementUploadMax bounds the file from the page (about 100,000
	// rows); a bigger one is the CLI's, which streams a million.
	settlementUploadMax = 8 << 20
	// settlementShownMax bounds the items the page lists; the counts
	// include the rest.
	settlementShownMax = 1000
)

type settlementData struct {
	File   string
	Report *reconcile.SettlementReport
	Items  []reconcile.SettlementItem
	Hidden int64 // items of the report not listed on the page
	// Verdict is the CLI's last line and exit status: the report's, or
	// UNUSABLE for a file that cannot be reconciled.
	Verdict *reconcile.Verdict
}

func (s *Server) settlementPage(w http.ResponseWriter, r *http.Request, sess *session) {
	s.render(w, r, http.StatusOK, "settlement", "Settlement reconciliation", settlementData{})
}

// settlement reconciles the uploaded file, as gateway reconcile settlement
// FILE.csv does.
func (s *Server) settlement(w http.ResponseWriter, r *http.Request, sess *session) {
	f, hdr, err := r.FormFile("file")
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "file: choose the settlement file (CSV: message_id,auth_id,amount,currency,date)")
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
	name := host.SafeValue(hdr.Filename, host.AuditTargetMax) // what was sent, never dropped (audit_trail.go)
	rep, err := reconcile.Settlement(r.Context(), s.cfg.Settlements, reconcile.NewRecords(s.cfg.DB),
		reconcile.SettlementInput{File: f, Name: name, Period: period, Actor: "console:" + sess.user.Login})
	if reconcile.IsUnusable(err) {
		v := reconcile.UnusableVerdict(err)
		s.record(r, sess, "failed", 0, "settlement.reconcile", name, clip(v.Line(), 500))
		s.render(w, r, http.StatusBadRequest, "settlement", "Settlement reconciliation", settlementData{File: name, Verdict: &v})
		return
	}
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	outcome := "ok"
	if !rep.OK() {
		outcome = "failed"
	}
	s.record(r, sess, outcome, 0, "settlement.reconcile", name, strconv.FormatInt(rep.Rows, 10)+" rows, "+
		strconv.FormatInt(rep.Counts.Matched, 10)+" matched, "+strconv.FormatInt(rep.Counts.ToAct(), 10)+" to act on; "+rep.Verdict.Word)
	d := settlementData{File: name, Report: rep, Items: rep.Items, Verdict: &rep.Verdict}
	if len(d.Items) > settlementShownMax {
		d.Items = d.Items[:settlementShownMax]
	}
	d.Hidden = int64(len(rep.Items)-len(d.Items)) + rep.ItemsOmitted
	s.render(w, r, http.StatusOK, "settlement", "Settlement reconciliation", d)
}
