package api

import (
	"mime"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/api/views"
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
			v := views.NewBalanceReport(m.ShopNo, q.period, rep)
			if totals {
				writeOK(c, views.NewReportTotals(v))
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
