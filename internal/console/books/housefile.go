package books

import (
	"context"
	"errors"
	"io"
	"mime/multipart"
	"net/http"

	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/reconcile"
)

// A file of the house's own, unlike a bank statement, names no merchant:
// its page is the uploaded file, the CLI's function on it and the report.
// The two such pages:
//   - the rail's settlement report (docs/finance.md, "Rail settlement
//     report"): what `gateway reconcile rail` does (reconcile.Rail, the
//     same records);
//   - the card network's refund file (docs/finance.md, "Refund
//     reconciliation"): what `gateway reconcile refunds` does
//     (reconcile.Refunds, the same records, kind network_refund).
//
// houseFile makes such a page from that function and what the page reads
// of its report, so that each page says only those two and the pages
// cannot drift apart.

// The pages; their POST takes a file (Register's bound).
const (
	railReportPath   = "/audit/rail"
	refundReportPath = "/audit/refunds"
)

func (s *pages) railReport(w http.ResponseWriter, r *http.Request, u *host.User) {
	page := uploadPage{page: "rail_report", title: "Rail report reconciliation", action: "rail.reconcile"}
	s.reconcile(w, r, u, houseFile(r.Context(), s, page, s.d.Rail, s.d.Rail != nil, reconcile.Rail,
		func(rep *reconcile.RailReport) (uploadResult, []reconcile.RailItem, int64) {
			return figures(rep.Rows, rep.Counts.Matched, rep.Counts.ToAct(), rep.Verdict), rep.Items, rep.ItemsOmitted
		}))
}

func (s *pages) refundReport(w http.ResponseWriter, r *http.Request, u *host.User) {
	page := uploadPage{page: "refund_report", title: "Refund file reconciliation", action: "refunds.reconcile"}
	s.reconcile(w, r, u, houseFile(r.Context(), s, page, s.d.Refunds, s.d.Refunds != nil, reconcile.Refunds,
		func(rep *reconcile.RefundReport) (uploadResult, []reconcile.RefundItem, int64) {
			return figures(rep.Rows, rep.Counts.Matched, rep.Counts.ToAct(), rep.Verdict), rep.Items, rep.ItemsOmitted
		}))
}

// houseFileData is such a page's data: the report R and its items I.
type houseFileData[R, I any] struct {
	File    string
	Report  *R
	Items   []I
	Hidden  int64 // items of the report not listed on the page
	Verdict *reconcile.Verdict
}

// houseInput is what the CLI's function on a house file takes: the fields
// of reconcile.RailInput and reconcile.RefundInput alike.
type houseInput = struct {
	File   io.ReadSeeker
	Name   string
	Period reconcile.Period
	Actor  string
}

// houseFile fills p's run and show. src is what the file is reconciled
// against; ready is false for a console built without it (the page then
// fails, as a bug would); reconcileFile is the CLI's function; parts reads
// the trail's figures (rows, matched, to act on, verdict) and the items
// from the report.
func houseFile[S any, In ~houseInput, R, I any](ctx context.Context, s *pages, p uploadPage, src S, ready bool,
	reconcileFile func(context.Context, S, *reconcile.Records, In) (*R, error),
	parts func(*R) (uploadResult, []I, int64)) uploadPage {
	p.fileMissing = fileMissing
	p.empty = houseFileData[R, I]{}
	p.run = func(f multipart.File, name string, period reconcile.Period, actor string) (uploadResult, error) {
		if !ready {
			return uploadResult{}, errNoSource
		}
		rep, err := reconcileFile(ctx, src, reconcile.NewRecords(s.d.DB), In(houseInput{File: f, Name: name, Period: period, Actor: actor}))
		if err != nil {
			return uploadResult{}, err
		}
		res, _, _ := parts(rep)
		res.report = rep
		return res, nil
	}
	p.show = func(name string, res uploadResult, v reconcile.Verdict) any {
		d := houseFileData[R, I]{File: name, Verdict: &v}
		if rep, ok := res.report.(*R); ok {
			_, items, omitted := parts(rep)
			d.Report = rep
			d.Items, d.Hidden = shownItems(items, omitted)
		}
		return d
	}
	return p
}

// figures are a report's figures as the audit trail records them.
func figures(rows, matched, toAct int64, v reconcile.Verdict) uploadResult {
	return uploadResult{rows: rows, matched: matched, toAct: toAct, verdict: v}
}

// errNoSource: a console built without the reads a page's file is
// reconciled against (Deps.Rail, Deps.Refunds).
var errNoSource = errors.New("console: no source configured for this reconciliation")
