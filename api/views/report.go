package views

import (
	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/postings"
)

// The balance report's answers, GET /shop/reports/balance and its totals
// (docs/api.md, "Reports").

// ReportFigures is one row of the report: signed amounts in the currency's
// decimals.
type ReportFigures struct {
	Opening   postings.Money                   `json:"opening"`
	Activity  map[bill.Category]postings.Money `json:"activity"`
	Closing   postings.Money                   `json:"closing"`
	Movements int64                            `json:"movements"`
}

// ReportClass is the figures of one account class.
type ReportClass struct {
	AccountClass bill.AccountClass `json:"accountClass"`
	ReportFigures
}

// ReportCurrency is one currency's account classes and their total.
type ReportCurrency struct {
	Currency string        `json:"currency"`
	Accounts []ReportClass `json:"accounts"`
	Total    ReportFigures `json:"total"`
}

// ReportPeriod states a report's period, first in each of its answers.
type ReportPeriod struct {
	ShopNo      string `json:"shopNo"`
	StartDate   string `json:"startDate"`
	EndDate     string `json:"endDate"`
	TimeZone    string `json:"timeZone"`
	PeriodStart string `json:"periodStart"`
	PeriodEnd   string `json:"periodEnd"`
}

// BalanceReport is the answer of GET /shop/reports/balance.
type BalanceReport struct {
	ReportPeriod
	Categories []bill.Category  `json:"categories"`
	Currencies []ReportCurrency `json:"currencies"`
}

func newReportFigures(r *bill.ReportRow) ReportFigures {
	v := ReportFigures{
		Opening: Money(r.Opening, r.Currency), Closing: Money(r.Closing, r.Currency),
		Activity: make(map[bill.Category]postings.Money, len(r.Activity)), Movements: r.Movements,
	}
	for _, c := range bill.Categories() {
		v.Activity[c] = Money(r.Activity[c], r.Currency)
	}
	return v
}

// NewBalanceReport is the report rep of the merchant shopNo over the days
// of p.
func NewBalanceReport(shopNo string, p bill.Period, rep *bill.BalanceReport) BalanceReport {
	start, end, zone := bill.PeriodTimes(rep)
	v := BalanceReport{
		ReportPeriod: ReportPeriod{ShopNo: shopNo, StartDate: p.Start.Format(postings.DayLayout),
			EndDate: p.End.Format(postings.DayLayout), TimeZone: zone, PeriodStart: start, PeriodEnd: end},
		Categories: bill.Categories(), Currencies: []ReportCurrency{},
	}
	totals := rep.Totals()
	for i := range rep.Rows {
		r := &rep.Rows[i]
		if n := len(v.Currencies); n == 0 || v.Currencies[n-1].Currency != r.Currency {
			v.Currencies = append(v.Currencies, ReportCurrency{Currency: r.Currency, Total: newReportFigures(&totals[n])})
		}
		cv := &v.Currencies[len(v.Currencies)-1]
		cv.Accounts = append(cv.Accounts, ReportClass{AccountClass: r.Class, ReportFigures: newReportFigures(r)})
	}
	return v
}

// ReportTotal is one currency's line of the totals: the sum of its report
// rows, and how many they are (the totals file's columns).
type ReportTotal struct {
	Currency string `json:"currency"`
	Rows     int    `json:"rows"`
	ReportFigures
}

// ReportTotals is the answer of GET /shop/reports/balance/totals.
type ReportTotals struct {
	ReportPeriod
	Totals []ReportTotal `json:"totals"`
}

// NewReportTotals is the totals of the report v.
func NewReportTotals(v BalanceReport) ReportTotals {
	t := ReportTotals{ReportPeriod: v.ReportPeriod, Totals: make([]ReportTotal, len(v.Currencies))}
	for i, cv := range v.Currencies {
		t.Totals[i] = ReportTotal{Currency: cv.Currency, Rows: len(cv.Accounts), ReportFigures: cv.Total}
	}
	return t
}
