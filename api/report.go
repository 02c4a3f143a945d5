package api

import (
	"mime"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/postings"
)

// The balance report, GET /shop/reports/balance and its totals,
// GET /shop/reports/balance/totals (issue 29 points 3 and 6; docs/api.md,
// "Reports"; docs/finance.md): for each currency and account class, the
// opening balance, the period's activity by reporting category and the
// closing balance, over a range of days in UTC or an IANA time zone. JSON,
// or CSV when the client accepts text/csv, as the bill decides it. The
// report's CSV has no trailer; its totals are the second route's file.

// reportQuery is a validated report request.
type reportQuery struct {
	period   bill.Period
	zone     string // the zone's name, "UTC" by default (the file name's)
	currency string // "" for every currency
}

// parseReportQuery checks the query; every refusal is a 400 naming its
// parameter: the days as the bill's (calendar limits), endDate not before
// startDate and within bill.ReportDaysMax days, timeZone an IANA name,
// currency a known code.
func parseReportQuery(c *gin.Context) (reportQuery, error) {
	var q reportQuery
	start, err := queryDate(c, "startDate")
	if err != nil {
		return q, err
	}
	end, err := queryDate(c, "endDate")
	if err != nil {
		return q, err
	}
	zone, _, err := queryValue(c, "timeZone")
	if err != nil {
		return q, err
	}
	loc, err := bill.ParseTimeZone("timeZone", zone)
	if err != nil {
		return q, err
	}
	if q.period, err = bill.NewPeriod(start, end, loc); err != nil {
		return q, err
	}
	q.zone = loc.String()
	q.currency, err = queryCurrency(c, "currency")
	return q, err
}

// reportFiguresView is one row of the report: signed amounts in the
// currency's decimals.
type reportFiguresView struct {
	Opening   postings.Money                   `json:"opening"`
	Activity  map[bill.Category]postings.Money `json:"activity"`
	Closing   postings.Money                   `json:"closing"`
	Movements int64                            `json:"movements"`
}

type reportClassView struct {
	AccountClass bill.AccountClass `json:"accountClass"`
	reportFiguresView
}

type reportCurrencyView struct {
	Currency string            `json:"currency"`
	Accounts []reportClassView `json:"accounts"`
	Total    reportFiguresView `json:"total"`
}

// reportPeriodView states a report's period, first in each of its answers.
type reportPeriodView struct {
	ShopNo      string `json:"shopNo"`
	StartDate   string `json:"startDate"`
	EndDate     string `json:"endDate"`
	TimeZone    string `json:"timeZone"`
	PeriodStart string `json:"periodStart"`
	PeriodEnd   string `json:"periodEnd"`
}

type balanceReportView struct {
	reportPeriodView
	Categories []bill.Category      `json:"categories"`
	Currencies []reportCurrencyView `json:"currencies"`
}

func newReportFigures(r *bill.ReportRow) reportFiguresView {
	v := reportFiguresView{
		Opening: money(r.Opening, r.Currency), Closing: money(r.Closing, r.Currency),
		Activity: make(map[bill.Category]postings.Money, len(r.Activity)), Movements: r.Movements,
	}
	for _, c := range bill.Categories() {
		v.Activity[c] = money(r.Activity[c], r.Currency)
	}
	return v
}

func newBalanceReportView(shopNo string, q reportQuery, rep *bill.BalanceReport) balanceReportView {
	start, end, zone := bill.PeriodTimes(rep)
	v := balanceReportView{
		reportPeriodView: reportPeriodView{ShopNo: shopNo, StartDate: q.period.Start.Format(dateLayout),
			EndDate: q.period.End.Format(dateLayout), TimeZone: zone, PeriodStart: start, PeriodEnd: end},
		Categories: bill.Categories(), Currencies: []reportCurrencyView{},
	}
	totals := rep.Totals()
	for i := range rep.Rows {
		r := &rep.Rows[i]
		if n := len(v.Currencies); n == 0 || v.Currencies[n-1].Currency != r.Currency {
			v.Currencies = append(v.Currencies, reportCurrencyView{Currency: r.Currency, Total: newReportFigures(&totals[n])})
		}
		cv := &v.Currencies[len(v.Currencies)-1]
		cv.Accounts = append(cv.Accounts, reportClassView{AccountClass: r.Class, reportFiguresView: newReportFigures(r)})
	}
	return v
}

// reportTotalView is one currency's line of the totals: the sum of its
// report rows, and how many they are (the totals file's columns).
type reportTotalView struct {
	Currency string `json:"currency"`
	Rows     int    `json:"rows"`
	reportFiguresView
}

type reportTotalsView struct {
	reportPeriodView
	Totals []reportTotalView `json:"totals"`
}

func newReportTotalsView(v balanceReportView) reportTotalsView {
	t := reportTotalsView{reportPeriodView: v.reportPeriodView, Totals: make([]reportTotalView, len(v.Currencies))}
	for i, cv := range v.Currencies {
		t.Totals[i] = reportTotalView{Currency: cv.Currency, Rows: len(cv.Accounts), reportFiguresView: cv.Total}
	}
	return t
}

// handleBalanceReport answers GET /shop/reports/balance (totals false) and
// GET /shop/reports/balance/totals (totals true).
func handleBalanceReport(l Bills, totals bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Header("Vary", "Accept")
		q, err := parseReportQuery(c)
		if err != nil {
			writeError(c, err)
			return
		}
		m := merchantOf(c)
		rep, err := l.BalanceReport(c.Request.Context(), m.ID, q.period.From(), q.period.To(), q.currency)
		if err != nil {
			writeError(c, err)
			return
		}
		if !acceptsCSV(c.Request.Header) {
			v := newBalanceReportView(m.ShopNo, q, rep)
			if totals {
				writeOK(c, newReportTotalsView(v))
				return
			}
			writeOK(c, v)
			return
		}
		b, err := bill.EncodeReportCSV(rep, totals)
		if err != nil {
			writeError(c, err)
			return
		}
		name := postings.ReportFileName("balance", m.ShopNo, q.period.Start, q.period.End, q.zone, q.currency, totals)
		c.Header("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
		rows := len(rep.Rows)
		if totals {
			rows = len(rep.Totals())
		}
		c.Header("X-Total-Count", strconv.Itoa(rows))
		echoVersion(c, nil) // the CSV's columns do not change with the version
		setOutcome(c, codeOK)
		c.Data(http.StatusOK, "text/csv; charset=utf-8", b)
		c.Abort()
	}
}
