// Package books is the console's pages of the books (docs/console.md): the
// four reconciliations from an uploaded file (the card network's
// settlement and refund files, the bank statement, the rail's report), the
// corrections (adjustments: propose, approve, reject), the balance report,
// the signed checkpoints and the closed periods, the journal entry by entry
// and audit verify run from the page. Each runs the function the CLI runs.
// The console serves them through host.Host: its guard (role and CSRF), its
// layout, its error page and its audit trail.
package books

import (
	"database/sql"
	"embed"
	"log/slog"
	"net/http"

	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/reconcile"
)

//go:embed templates/*.html templates/partials/*.html
var templateFS embed.FS

// Deps are the domains the pages run on, each behind the small interface
// of its area (deps.go), and the console's audit trail.
type Deps struct {
	DB          *sql.DB // the reconciliation records (reconcile.NewRecords) and the journal's deposits
	Log         *slog.Logger
	Ledger      Ledger
	Merchants   Merchants
	Bills       Bills
	Audit       Audit
	Adjustments Adjustments
	// Settlements are the network's clearings that settlement
	// reconciliation reads, as reconcile declares them.
	Settlements reconcile.SettlementSource
	Rail        reconcile.RailSource   // the remittances' ends the rail report page reads; nil: the page fails
	Refunds     reconcile.RefundSource // the network's refunds the refund file page reads; nil: the page fails
	Trail       Trail
}

type pages struct {
	h host.Host
	d Deps
	// runs are the audit verify runs started from the page, one going at
	// a time (verify.go).
	runs verifyRuns
}

// Register adds the books' pages to the console h: its templates and its
// routes, each with the permission it needs.
func Register(h host.Host, d Deps) error {
	if err := h.Pages(templateFS); err != nil {
		return err
	}
	s := &pages{h: h, d: d}
	h.Handle("GET /reports/balance", host.PermMerchantRead, s.balanceReport)
	h.Handle("GET /reports/balance.csv", host.PermMerchantRead, s.balanceReportCSV(false))
	h.Handle("GET /reports/balance-totals.csv", host.PermMerchantRead, s.balanceReportCSV(true))
	h.Handle("GET /audit/journal", host.PermAudit, s.journal)
	h.Handle("GET /audit/journal/{shopNo}/{seq}", host.PermAudit, s.entry)
	h.Handle("GET /audit/verify", host.PermAudit, s.verifyPage)
	h.Handle("POST /audit/verify", host.PermAudit, s.verify)
	h.Handle("GET /audit/verify/{id}", host.PermAudit, s.verifyRunPage)
	// The reconciliations (upload.go): GET the form, POST the file.
	h.Handle("GET "+settlementPath, host.PermAudit, s.settlement)
	h.Handle("POST "+settlementPath, host.PermAudit, s.settlement)
	h.Handle(bankStatementPath, host.PermAudit, s.bankStatement)
	h.Handle(railReportPath, host.PermAudit, s.railReport)
	h.Handle(refundReportPath, host.PermAudit, s.refundReport)
	for _, p := range []string{settlementPath, bankStatementPath, railReportPath, refundReportPath} {
		h.LimitBody(p, uploadMax) // a file, not a form
	}
	h.Handle("GET /audit/checkpoints", host.PermAudit, s.checkpoints) // records.go
	h.Handle("GET /audit/checkpoints/{id}/file", host.PermAudit, s.checkpointFile)
	h.Handle("GET /closes", host.PermCloses, s.closes)
	h.Handle("GET "+adjustmentsPath, host.PermAudit, s.adjustments) // adjustments.go
	h.Handle("POST "+adjustmentsPath, host.PermOperate, s.adjustmentPropose)
	h.Handle("POST "+adjustmentsPath+"/{id}/{decision}", host.PermOperate, s.adjustmentDecide)
	h.Handle("GET "+adjustmentsPath+"/{id}/{decision}", host.PermOperate, host.BackTo(func(*http.Request) string { return adjustmentsPath }))
	return nil
}
