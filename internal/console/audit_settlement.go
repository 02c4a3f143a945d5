package console

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/paygate/gateway/reconcile"
)

// Settlement reconciliation from the page: the auditor uploads the card
// network's settlement file and sees what the CLI's reconcile settlement
// prints (reconcile.Settlement, the same function): the file's days, the
// counts per category, the totals per currency and each row or entry to
// act on. The file's dates are the range: the ledger's CARD_SETTLE entries
// of those days that the file lacks are missing_in_file.

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
	// ToAct of Checked rows and entries need attention, as the CLI's
	// verdict counts them.
	ToAct, Checked int64
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
	name := safeValue(hdr.Filename, auditTargetMax) // what was sent, never dropped (audit_trail.go)
	rep, err := reconcile.Settlement(r.Context(), s.cfg.Settlements, f)
	var fe *reconcile.FileError
	if errors.As(err, &fe) {
		s.record(r, sess, "failed", 0, "settlement.reconcile", name, clip(fe.Error(), 500))
		s.fail(w, r, http.StatusBadRequest, "file: "+fe.Error())
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
	c := rep.Counts
	s.record(r, sess, outcome, 0, "settlement.reconcile", name, strconv.FormatInt(rep.Rows, 10)+" rows, "+
		strconv.FormatInt(c.Matched, 10)+" matched, "+strconv.FormatInt(int64(len(rep.Items))+rep.ItemsOmitted, 10)+" to act on")
	d := settlementData{File: name, Report: rep, Items: rep.Items}
	if len(d.Items) > settlementShownMax {
		d.Items = d.Items[:settlementShownMax]
	}
	d.Hidden = int64(len(rep.Items)-len(d.Items)) + rep.ItemsOmitted
	d.ToAct = c.AmountDiffers + c.MissingInLedger + c.MissingInFile + c.DuplicateInFile + c.InvalidRow
	d.Checked = rep.Rows + c.MissingInFile
	s.render(w, r, http.StatusOK, "settlement", "Settlement reconciliation", d)
}
