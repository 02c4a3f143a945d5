package console

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/postings"
	"github.com/paygate/gateway/reconcile"
)

// Bank statement reconciliation from the page (docs/finance.md, "Bank
// statement reconciliation"): an operator or auditor uploads the bank's
// statement for one merchant and sees what `gateway reconcile bank` prints
// (reconcile.Bank, the same function, recording in the same records): the
// totals per currency, the counts, each line or deposit to act on, what was
// recorded and the verdict with the CLI's exit status. One route serves the
// form (GET) and the upload (POST), so that the shared route table grows by
// one line.

// bankStatementPath is the page; its POST takes a file (server.go's
// upload limit, as the settlement file's).
const bankStatementPath = "/audit/bank"

type bankStatementData struct {
	File, ShopNo string
	Report       *reconcile.BankReport
	Items        []reconcile.BankItem
	Hidden       int64
	Verdict      *reconcile.Verdict
}

const bankStatementTitle = "Bank statement reconciliation"

func (s *Server) bankStatement(w http.ResponseWriter, r *http.Request, sess *session) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		s.render(w, r, http.StatusOK, "bank_statement", bankStatementTitle, bankStatementData{})
		return
	case http.MethodPost:
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		s.fail(w, r, http.StatusMethodNotAllowed, "The bank statement page takes GET and POST.")
		return
	}
	f, hdr, err := r.FormFile("file")
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "file: choose the bank statement (CSV: value_date,amount,currency,reference)")
		return
	}
	defer f.Close()
	shop := strings.TrimSpace(r.FormValue("shopNo"))
	if shop == "" {
		s.fail(w, r, http.StatusBadRequest, "shopNo: required: the merchant whose deposits the statement's account receives")
		return
	}
	m, err := s.cfg.Merchants.MerchantByShopNo(r.Context(), shop)
	if err != nil && postings.AsError(err).Code == postings.ENOTFOUND {
		s.fail(w, r, http.StatusBadRequest, "shopNo: no merchant has this shop number")
		return
	} else if err != nil {
		s.domainError(w, r, err)
		return
	}
	var period reconcile.Period
	if from, to := r.FormValue("from"), r.FormValue("to"); from != "" || to != "" {
		if period, err = reconcile.NewPeriod("from", from, "to", to); err != nil {
			s.domainError(w, r, err)
			return
		}
	}
	name := safeValue(hdr.Filename, auditTargetMax)
	src := reconcile.JournalDeposits{DB: bun.NewDB(s.cfg.DB, pgdialect.New())}
	rep, err := reconcile.Bank(r.Context(), src, reconcile.NewRecords(s.cfg.DB), reconcile.BankInput{
		File: f, Name: name, Merchant: m.ID, ShopNo: m.ShopNo, Period: period, Actor: "console:" + sess.user.Login})
	d := bankStatementData{File: name, ShopNo: m.ShopNo}
	switch {
	case reconcile.IsUnusable(err):
		v := reconcile.UnusableVerdict(err)
		d.Verdict = &v
		s.record(r, sess, "failed", m.ID, "bank.reconcile", name, clip(v.Line(), 500))
		s.render(w, r, http.StatusBadRequest, "bank_statement", bankStatementTitle, d)
		return
	case err != nil:
		s.domainError(w, r, err)
		return
	}
	outcome := map[bool]string{true: "ok", false: "failed"}[rep.OK()]
	s.record(r, sess, outcome, m.ID, "bank.reconcile", name, strconv.FormatInt(rep.Rows, 10)+" lines, "+
		strconv.FormatInt(rep.Counts.Matched, 10)+" matched, "+strconv.FormatInt(rep.Counts.ToAct(), 10)+" to act on; "+rep.Verdict.Word)
	d.Report, d.Items, d.Verdict = rep, rep.Items, &rep.Verdict
	if len(d.Items) > settlementShownMax {
		d.Items = d.Items[:settlementShownMax]
	}
	d.Hidden = int64(len(rep.Items)-len(d.Items)) + rep.ItemsOmitted
	s.render(w, r, http.StatusOK, "bank_statement", bankStatementTitle, d)
}
