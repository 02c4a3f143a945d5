package books

import (
	"errors"
	"mime/multipart"

	"github.com/paygate/gateway/reconcile"
)

// A file of the house's own (the rail's report, the network's refund
// file), unlike a bank statement, names no merchant: its page is the
// uploaded file, the CLI's function on it and the report. houseFile makes
// such a page's run and show from that function and what the page reads
// of its report, so that the rail and refund pages (rail.go, refunds.go)
// say only those two and cannot drift apart.

// houseFileData is such a page's data: the report R and its items I.
type houseFileData[R, I any] struct {
	File    string
	Report  *R
	Items   []I
	Hidden  int64 // items of the report not listed on the page
	Verdict *reconcile.Verdict
}

// houseFile fills p's run and show. ready is false for a console built
// without the page's source (the page then fails, as a bug would);
// reconcileFile is the CLI's function; parts reads the trail's figures
// (rows, matched, to act on, verdict) and the items from the report.
func houseFile[R, I any](p uploadPage, ready bool,
	reconcileFile func(f multipart.File, name string, period reconcile.Period, actor string) (*R, error),
	parts func(*R) (uploadResult, []I, int64)) uploadPage {
	p.empty = houseFileData[R, I]{}
	p.run = func(f multipart.File, name string, period reconcile.Period, actor string) (uploadResult, error) {
		if !ready {
			return uploadResult{}, errNoSource
		}
		rep, err := reconcileFile(f, name, period, actor)
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

// errNoSource: a console built without the reads a page's file is
// reconciled against (Deps.Rail, Deps.Refunds).
var errNoSource = errors.New("console: no source configured for this reconciliation")
