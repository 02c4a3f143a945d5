package books

import (
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/postings"
	"github.com/paygate/gateway/reconcile"
)

// Bank statement reconciliation from the page (docs/finance.md, "Bank
// statement reconciliation"): an operator or auditor uploads the bank's
// statement for one merchant and sees what `gateway reconcile bank` prints
// (reconcile.Bank, the same function, recording in the same records).

// bankStatementPath is the page; its POST takes a file (Register's bound,
// as the settlement file's).
const bankStatementPath = "/audit/bank"

type bankStatementData struct {
	File, ShopNo string
	Report       *reconcile.BankReport
	Items        []reconcile.BankItem
	Hidden       int64
	Verdict      *reconcile.Verdict
}

func (s *pages) bankStatement(w http.ResponseWriter, r *http.Request, u *host.User) {
	var shopNo string
	run := func(f multipart.File, name string, period reconcile.Period, actor string) (uploadResult, error) {
		shop := strings.TrimSpace(r.FormValue("shopNo"))
		if shop == "" {
			return uploadResult{}, postings.FieldErrorf("shopNo", "required: the merchant whose deposits the statement's account receives")
		}
		m, err := s.d.Merchants.MerchantByShopNo(r.Context(), shop)
		if err != nil && postings.AsError(err).Code == postings.ENOTFOUND {
			return uploadResult{}, postings.FieldErrorf("shopNo", "no merchant has this shop number")
		} else if err != nil {
			return uploadResult{}, err
		}
		shopNo = m.ShopNo
		src := reconcile.JournalDeposits{DB: bun.NewDB(s.d.DB, pgdialect.New())}
		rep, err := reconcile.Bank(r.Context(), src, reconcile.NewRecords(s.d.DB), reconcile.BankInput{
			File: f, Name: name, Merchant: m.ID, ShopNo: m.ShopNo, Period: period, Actor: actor})
		if err != nil {
			return uploadResult{merchant: m.ID}, err
		}
		return uploadResult{merchant: m.ID, rows: rep.Rows, matched: rep.Counts.Matched, toAct: rep.Counts.ToAct(),
			verdict: rep.Verdict, report: rep}, nil
	}
	show := func(name string, res uploadResult, v reconcile.Verdict) any {
		d := bankStatementData{File: name, ShopNo: shopNo, Verdict: &v}
		if rep, ok := res.report.(*reconcile.BankReport); ok {
			d.Report = rep
			d.Items, d.Hidden = shownItems(rep.Items, rep.ItemsOmitted)
		}
		return d
	}
	s.reconcile(w, r, u, uploadPage{page: "bank_statement", title: "Bank statement reconciliation", action: "bank.reconcile",
		fileMissing: fileMissing, empty: bankStatementData{}, run: run, show: show})
}
