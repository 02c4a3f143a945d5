package books

import (
	"mime"
	"net/http"
	"net/url"

	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/postings"
)

// The balance report page (issue 29 point 3; docs/console.md, docs/finance.md)
// for a merchant's admin, finance and read-only users: the API's report
// (GET /shop/reports/balance) over days in UTC or an IANA zone, with the
// API's refusals, and its two CSV files under the API's names, written by
// the one encoder (bill.WriteReportCSV), so that the console's download and
// the API's are the same document. Without dates the page shows the last
// seven UTC days, as the bill page does.

// reportDaysDefault is the range without dates: the last seven UTC days,
// as the bill page's.
const reportDaysDefault = 7

type reportQuery struct {
	Period   bill.Period
	Zone     string // as given; "" for UTC
	Currency string
}

// values are the query's parameters, for the download links.
func (q reportQuery) values() string {
	v := url.Values{"startDate": {q.Period.Start.Format(postings.DayLayout)}, "endDate": {q.Period.End.Format(postings.DayLayout)}}
	if q.Zone != "" {
		v.Set("timeZone", q.Zone)
	}
	if q.Currency != "" {
		v.Set("currency", q.Currency)
	}
	return v.Encode()
}

func (s *pages) parseReport(r *http.Request) (reportQuery, error) {
	var q reportQuery
	start, end, err := host.ParseDays(r, s.h.Now(), reportDaysDefault)
	if err != nil {
		return q, err
	}
	v := r.URL.Query()
	for _, name := range []string{"timeZone", "currency"} {
		if len(v[name]) > 1 {
			return q, postings.FieldErrorf(name, "appears more than once")
		}
	}
	q.Zone = v.Get("timeZone")
	zone, err := bill.ParseTimeZone("timeZone", q.Zone)
	if err != nil {
		return q, err
	}
	if q.Period, err = bill.NewPeriod(start, end, zone); err != nil {
		return q, err
	}
	if c := v.Get("currency"); c != "" {
		cur, err := postings.LookupCurrency(c)
		if err != nil {
			return q, postings.FieldErrorf("currency", "must be a supported ISO 4217 code")
		}
		q.Currency = cur.Code
	}
	return q, nil
}

// reportLine is a row of the page: a class's (or a currency's total)
// figures, the categories in column order.
type reportLine struct {
	Currency, Class  string
	Opening, Closing int64
	Activity         []int64
	Movements        int64
}

type reportData struct {
	Q                    reportQuery
	Start, End, TimeZone string
	Categories           []bill.Category
	Lines                []reportLine
	CSV, TotalsCSV       string
}

func newReportLine(r bill.ReportRow, class string) reportLine {
	l := reportLine{Currency: r.Currency, Class: class, Opening: r.Opening, Closing: r.Closing, Movements: r.Movements}
	for _, c := range bill.Categories() {
		l.Activity = append(l.Activity, r.Activity[c])
	}
	return l
}

// readReport reads the report the request asks for; false when it has
// answered with the refusal or the failure.
func (s *pages) readReport(w http.ResponseWriter, r *http.Request, u *host.User) (reportQuery, *bill.BalanceReport, bool) {
	q, err := s.parseReport(r)
	if err != nil {
		s.h.DomainError(w, r, err)
		return q, nil, false
	}
	rep, err := s.d.Bills.BalanceReport(r.Context(), u.MerchantID, q.Period.From(), q.Period.To(), q.Currency)
	if err != nil {
		s.h.DomainError(w, r, err)
		return q, nil, false
	}
	return q, rep, true
}

func (s *pages) balanceReport(w http.ResponseWriter, r *http.Request, u *host.User) {
	q, rep, ok := s.readReport(w, r, u)
	if !ok {
		return
	}
	d := reportData{Q: q, Categories: bill.Categories(),
		CSV: "/reports/balance.csv?" + q.values(), TotalsCSV: "/reports/balance-totals.csv?" + q.values()}
	d.Start, d.End, d.TimeZone = bill.PeriodTimes(rep)
	totals := rep.Totals()
	for i, row := range rep.Rows {
		d.Lines = append(d.Lines, newReportLine(row, string(row.Class)))
		if i+1 == len(rep.Rows) || rep.Rows[i+1].Currency != row.Currency {
			for _, t := range totals {
				if t.Currency == row.Currency {
					d.Lines = append(d.Lines, newReportLine(t, "total"))
				}
			}
		}
	}
	s.h.Render(w, r, http.StatusOK, "report_balance", "Balance report", d)
}

// balanceReportCSV answers the report's CSV file (totals false) or its
// totals file, whole: the report is a few rows a currency, so it is encoded
// before the status and a failure is an error page, never a short file.
func (s *pages) balanceReportCSV(totals bool) host.Handler {
	return func(w http.ResponseWriter, r *http.Request, u *host.User) {
		q, rep, ok := s.readReport(w, r, u)
		if !ok {
			return
		}
		b, err := bill.EncodeReportCSV(rep, totals)
		if err != nil {
			s.h.Internal(w, r, err)
			return
		}
		name := postings.ReportFileName("balance", u.ShopNo, q.Period.Start, q.Period.End, q.Period.Zone.String(), q.Currency, totals)
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(b)
	}
}
